// The TypeScript MCP SDK's client, as agent hosts embed it, driven line by line from the Python tests.
//
// Reads one JSON command per line on stdin and writes one JSON event per line on stdout:
//   {"op": "connect", "client": "a", "url": "...", "token": "..."}      -> {"event": "connected", "client", "sessionId", "server"}
//   {"op": "call", "client": "a", "call": "k", "tool": "...", "args": {...},
//    "timeout": ms, "resetTimeoutOnProgress": bool, "progress": bool}    -> {"event": "progress" | "result" | "error", "call", ...}
//   {"op": "abort", "call": "k"}          aborts the call as a host does on Esc (AbortController)
//   {"op": "drop", "client": "a"}         closes the client's connections without a cancel (a crash)
//   {"op": "close", "client": "a"}        closes the client
//   {"op": "tools", "client": "a"}        -> {"event": "tools", "client", "tools": [...], "instructions"}
// Every event carries "t", milliseconds since the driver started (performance.now()).
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const clients = new Map();
const aborts = new Map();

function emit(event) {
  process.stdout.write(JSON.stringify({ ...event, t: performance.now() }) + "\n");
}

async function connect({ client: name, url, token }) {
  // A fetch of its own per client, so "drop" can cut its connections like a killed host.
  const inFlight = new Set();
  const fetchWithCut = (input, init = {}) => {
    const controller = new AbortController();
    inFlight.add(controller);
    if (init.signal) init.signal.addEventListener("abort", () => controller.abort(init.signal.reason));
    // Kept after the response starts: aborting it then cuts the event stream being read.
    return fetch(input, { ...init, signal: controller.signal });
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: fetchWithCut,
  });
  const client = new Client({ name: `ts-driver-${name}`, version: "1.0.0" });
  await client.connect(transport);
  clients.set(name, { client, transport, inFlight });
  emit({ event: "connected", client: name, sessionId: transport.sessionId ?? null, server: client.getServerVersion() ?? null });
}

async function call({ client: name, call: id, tool, args, timeout, resetTimeoutOnProgress, progress }) {
  const { client } = clients.get(name);
  const controller = new AbortController();
  aborts.set(id, controller);
  const options = { signal: controller.signal };
  if (timeout !== undefined) options.timeout = timeout;
  if (resetTimeoutOnProgress !== undefined) options.resetTimeoutOnProgress = resetTimeoutOnProgress;
  if (progress) {
    options.onprogress = (p) => emit({ event: "progress", call: id, progress: p.progress, message: p.message ?? null });
  }
  try {
    const result = await client.callTool({ name: tool, arguments: args ?? {} }, CallToolResultSchema, options);
    emit({ event: "result", call: id, result });
  } catch (error) {
    emit({ event: "error", call: id, code: error.code ?? null, message: String(error) });
  } finally {
    aborts.delete(id);
  }
}

async function handle(command) {
  switch (command.op) {
    case "connect":
      return connect(command);
    case "call":
      call(command); // runs on; its result is an event of its own
      return emit({ event: "called", call: command.call });
    case "abort":
      aborts.get(command.call)?.abort();
      return emit({ event: "aborted", call: command.call });
    case "drop": {
      const entry = clients.get(command.client);
      for (const controller of entry.inFlight) controller.abort();
      entry.inFlight.clear();
      return emit({ event: "dropped", client: command.client });
    }
    case "close":
      await clients.get(command.client).client.close();
      clients.delete(command.client);
      return emit({ event: "closed", client: command.client });
    case "tools": {
      const { client } = clients.get(command.client);
      const listed = await client.listTools();
      return emit({
        event: "tools",
        client: command.client,
        tools: listed.tools.map((tool) => ({ name: tool.name, description: tool.description ?? "" })),
        instructions: client.getInstructions() ?? "",
      });
    }
    default:
      throw new Error(`unknown op ${command.op}`);
  }
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const command = JSON.parse(line);
  try {
    await handle(command);
  } catch (error) {
    emit({ event: "failed", op: command.op, message: String(error) });
  }
}
for (const { client } of clients.values()) await client.close().catch(() => {});
process.exit(0);
