import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { Command } from "commander";
import { PROTO_ROOT } from "../api/rest.ts";
import { API_SERVICES } from "../api/service.ts";
import type { Environment } from "../config/environment.ts";
import { UserFacingError } from "../core/errors.ts";
import { StreamService } from "../gen/mintlens/v1beta2/stream_pb.ts";
import type { Lifecycle } from "./shutdown.ts";

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
 * '{"metric":"METRIC_SALES_VOLUME","duration":"DURATION_30_DAYS"}'`. Prints the answer as JSON; a
 * stream's messages as one JSON line each, until it ends or the command is stopped (Ctrl-C).
 */
type Unary = (
  request: unknown,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response?: unknown) => void,
) => void;

type ServerStreaming = (request: unknown, metadata: grpc.Metadata) => grpc.ClientReadableStream<unknown>;

/** Every service `call` reaches: the API's operations and the live event stream. */
export const CALLABLE_SERVICES = [...API_SERVICES, StreamService] as const;

/** The key in `path`: its first line, without surrounding blanks, as `mintlens keys create > file` leaves it. */
export function readKeyFile(path: string): string {
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

export function registerCallCommand(program: Command, environment: Environment, lifecycle: Lifecycle): void {
  const methods = CALLABLE_SERVICES.flatMap((s) => s.methods.map((m) => `${s.name}/${m.name}`));
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
      const service = CALLABLE_SERVICES.find((s) => s.name === serviceName);
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
      if (rpc.methodKind === "server_streaming") {
        const open = (client as unknown as Record<string, ServerStreaming>)[rpc.localName];
        if (open === undefined) throw new Error(`${rpc.name} is not in the published .proto`);
        try {
          await printStream(open.call(client, body, metadata), environment, lifecycle.signal);
        } finally {
          client.close();
        }
        return;
      }
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

/** Prints each message of a stream as one JSON line until it ends, or until `stop` cancels it. */
async function printStream(
  stream: grpc.ClientReadableStream<unknown>,
  environment: Environment,
  stop: AbortSignal,
): Promise<void> {
  const cancel = () => stream.cancel();
  stop.addEventListener("abort", cancel, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      stream.on("data", (message: unknown) => environment.stdout.write(`${JSON.stringify(message)}\n`));
      stream.on("error", (error: grpc.ServiceError) => {
        if (error.code === grpc.status.CANCELLED && stop.aborted) resolve();
        else {
          const cursor = error.metadata?.get("mintlens-resume-cursor")[0];
          const resume = cursor === undefined ? "" : ` (resume after cursor ${cursor.toString()})`;
          reject(new UserFacingError(`${grpc.status[error.code] ?? error.code}: ${error.details}${resume}`));
        }
      });
      stream.on("end", () => resolve());
    });
  } finally {
    stop.removeEventListener("abort", cancel);
  }
}
