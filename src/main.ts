import { runCommandLine } from "./cli/program.ts";
import { createLifecycle } from "./cli/shutdown.ts";
import { ignoreStrayConnectionRejections } from "./cli/stray-rejections.ts";
import { readEnvironment } from "./config/environment.ts";

const environment = readEnvironment();
// A failover must not end the process from inside the database driver: see the function.
ignoreStrayConnectionRejections();
const lifecycle = createLifecycle();
// The process ends once nothing is left running.
process.exitCode = await runCommandLine(process.argv.slice(2), environment, lifecycle);
