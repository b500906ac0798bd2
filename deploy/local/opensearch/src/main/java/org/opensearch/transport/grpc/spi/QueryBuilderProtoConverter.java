package org.opensearch.transport.grpc.spi;

/**
 * Stands in for the interface of the same name in OpenSearch's transport-grpc SPI, which is not
 * published to Maven Central for 3.5.0. The k-NN plugin creates a gRPC query converter that
 * implements it in createComponents, so the class must exist to load; the node has no gRPC
 * transport, so nothing ever calls the converter.
 */
public interface QueryBuilderProtoConverter {}
