package org.opensearch.protobufs;

/**
 * Stands in for the protobuf message of the same name (opensearch-protobufs, which transport-grpc
 * brings in the official distribution and which is not on Maven Central for 3.5.0). The k-NN
 * plugin's gRPC query converter names it in its method signatures, and the node's injector
 * reflects over those methods when it binds the converter, so the type must resolve. Never
 * instantiated: the node has no gRPC transport.
 */
public final class QueryContainer {
  private QueryContainer() {}

  /** The query kind a converter handles; only the type is needed here, no constants. */
  public enum QueryContainerCase {}
}
