package org.opensearch.transport.grpc.spi;

/**
 * Stands in for the transport-grpc SPI registry type that the k-NN plugin's gRPC query converter
 * names in a field and a setter (see QueryBuilderProtoConverter); never instantiated here.
 */
public interface QueryBuilderProtoConverterRegistry {}
