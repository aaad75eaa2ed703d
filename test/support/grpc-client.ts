/** A gRPC client of the API built from the published `.proto` files, as a client of the project would build it. */
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { PROTO_ROOT } from "../../src/api/rest.ts";
import type { TlsMaterial } from "../../src/api/tls.ts";

export interface GrpcAnswer {
  error: grpc.ServiceError | null;
  response: Record<string, unknown> | undefined;
}

/** The published `.proto` loaded as a client sees it: enums as names, 64-bit integers as strings, defaults present. */
export function loadPublishedProto(): grpc.GrpcObject {
  const definition = loadSync(
    [
      "mintlens/v1beta2/foundational.proto",
      "mintlens/v1beta2/collections.proto",
      "mintlens/v1beta2/marketplaces.proto",
      "mintlens/v1beta2/wallets.proto",
    ],
    {
      includeDirs: [PROTO_ROOT],
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    },
  );
  return grpc.loadPackageDefinition(definition);
}

export type GrpcCall = (
  service: "FoundationalService" | "CollectionsService" | "MarketplacesService" | "WalletsService",
  method: string,
  request: Record<string, unknown>,
  options?: { key?: string | null },
) => Promise<GrpcAnswer>;

/**
 * A gRPC client of the API at `address` (TLS, trusting `tls`'s certificate), built from the
 * published `.proto` files, that calls with `key` unless told otherwise.
 */
export function grpcCaller(
  address: string,
  tls: TlsMaterial,
  key: string,
): { call: GrpcCall; close(): void } {
  const proto = loadPublishedProto() as unknown as {
    mintlens: { v1beta2: Record<string, grpc.ServiceClientConstructor> };
  };
  const credentials = grpc.credentials.createSsl(tls.cert);
  const clients = new Map<string, grpc.Client>();
  const client = (service: string) => {
    let c = clients.get(service);
    if (c === undefined) {
      const Constructor = proto.mintlens.v1beta2[service];
      if (Constructor === undefined) throw new Error(`no service ${service} in the published .proto`);
      c = new Constructor(address, credentials);
      clients.set(service, c);
    }
    return c;
  };
  return {
    call(service, method, request, requestOptions = {}) {
      const metadata = new grpc.Metadata();
      const presented = requestOptions.key === undefined ? key : requestOptions.key;
      if (presented !== null) metadata.set("x-api-key", presented);
      const c = client(service) as unknown as Record<
        string,
        (
          request: unknown,
          metadata: grpc.Metadata,
          callback: (error: grpc.ServiceError | null, response?: Record<string, unknown>) => void,
        ) => void
      >;
      const call = c[method];
      if (call === undefined) throw new Error(`no method ${service}.${method}`);
      return new Promise((resolve) => {
        call.call(c, request, metadata, (error, response) => resolve({ error, response }));
      });
    },
    close() {
      for (const c of clients.values()) c.close();
    },
  };
}
