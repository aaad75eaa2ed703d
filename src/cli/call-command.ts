import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { Command } from "commander";
import { PROTO_ROOT } from "../api/rest.ts";
import { API_SERVICES } from "../api/service.ts";
import type { Environment } from "../config/environment.ts";
import { UserFacingError } from "../core/errors.ts";

interface CallFlags {
  address: string;
  keyFile?: string;
  ca?: string;
  insecureSkipVerify?: boolean;
}

const PACKAGE = "mintlens.v1beta2";

/**
 * `mintlens call`: a gRPC client of the API built from the published `.proto` files, so the gRPC
 * side can be tried without installing anything: `mintlens call CollectionsService/GetTopCollections
 * '{"metric":"METRIC_SALES_VOLUME","duration":"DURATION_30_DAYS"}'`. Prints the answer as JSON.
 */
type Unary = (
  request: unknown,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response?: unknown) => void,
) => void;

/** The key in `path`: its first line, without surrounding blanks, as `mintlens keys create > file` leaves it. */
function readKeyFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UserFacingError(`cannot read the key file ${path}: ${(error as Error).message}`);
  }
  const key = (text.split("\n")[0] ?? "").trim();
  if (key === "") throw new UserFacingError(`the key file ${path} is empty`);
  return key;
}

export function registerCallCommand(program: Command, environment: Environment): void {
  const methods = API_SERVICES.flatMap((s) => s.methods.map((m) => `${s.name}/${m.name}`));
  program
    .command("call <method> [request]")
    .description(`call the gRPC API and print the answer as JSON; <method> is one of ${methods.join(", ")}`)
    .option("--address <host:port>", "the gRPC listener", "localhost:50051")
    .option(
      "--key-file <file>",
      "a file holding the API key (default: env MINTLENS_API_KEY); never on the command line, where other users and the shell history see it",
    )
    .option(
      "--ca <file>",
      "PEM certificate to trust: the server's self-signed one, or its CA (default: the system's)",
    )
    .action(async (method: string, request: string | undefined, flags: CallFlags) => {
      const [serviceName, methodName] = method.replace(`${PACKAGE}.`, "").split("/");
      const service = API_SERVICES.find((s) => s.name === serviceName);
      const rpc = service?.methods.find((m) => m.name === methodName);
      if (service === undefined || rpc === undefined) {
        throw new UserFacingError(`unknown method ${method}: one of ${methods.join(", ")}`);
      }
      let body: unknown;
      try {
        body = JSON.parse(request ?? "{}");
      } catch (error) {
        throw new UserFacingError(`the request is not JSON: ${(error as Error).message}`);
      }
      const definition = loadSync(`${service.file.name}.proto`, {
        includeDirs: [PROTO_ROOT],
        longs: String,
        enums: String,
        defaults: true,
      });
      const loaded = grpc.loadPackageDefinition(definition) as unknown as {
        mintlens: { v1beta2: Record<string, grpc.ServiceClientConstructor> };
      };
      const Client = loaded.mintlens.v1beta2[service.name];
      if (Client === undefined) throw new Error(`${service.name} is not in the published .proto`);
      const ca = flags.ca === undefined ? undefined : readFileSync(flags.ca);
      const client = new Client(flags.address, grpc.credentials.createSsl(ca));
      const metadata = new grpc.Metadata();
      const key =
        flags.keyFile === undefined ? environment.variables.MINTLENS_API_KEY : readKeyFile(flags.keyFile);
      if (key) metadata.set("x-api-key", key);
      const call = (client as unknown as Record<string, Unary>)[rpc.localName];
      if (call === undefined) throw new Error(`${rpc.name} is not in the published .proto`);
      try {
        const answer = await new Promise<unknown>((resolve, reject) =>
          call.call(client, body, metadata, (error, response) => (error ? reject(error) : resolve(response))),
        );
        environment.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
      } catch (error) {
        const e = error as grpc.ServiceError;
        throw new UserFacingError(`${grpc.status[e.code] ?? e.code}: ${e.details ?? e.message}`);
      } finally {
        client.close();
      }
    });
}
