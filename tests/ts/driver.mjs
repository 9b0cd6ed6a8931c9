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
//   {"op": "signin", "client": "a", "url": "...", "redirectUrl": "...", "clientName": "..."}
//                                         signs in the MCP way (the SDK's OAuth client): -> {"event": "authorize",
//                                         "client", "url"}, then, once the code is sent, {"event": "connected", ...}
//   {"op": "code", "client": "a", "code": "..."}   the code the person's browser brought back to redirectUrl
//   {"op": "tokens", "client": "a"}       -> {"event": "tokens", "client", "tokens", "clientId"}
//   {"op": "task-call", "call": "k", "url": "...", "token": "...", "tool": "...", "args": {...}}
//                                         a 2026-07-28 tools/call declaring the Tasks extension, on fetch (SDK 1.32
//                                         speaks neither): -> {"event": "task", "call", "handle"} or {"event":
//                                         "result", ...}; then it polls tasks/get at pollIntervalMs, -> {"event":
//                                         "task-state", "call", "state"} on each change, until the task ends
//   {"op": "task-cancel", "call": "k"}    tasks/cancel for that call's task -> {"event": "task-cancelled", "call"}
//   {"op": "task-request", "call": "k", "method": "...", "params": {...}, "token"?: "..."}
//                                         any other request on that call's URL (and token, unless another is
//                                         given) -> {"event": "response", "call", "response"}
// Every event carries "t", milliseconds since the driver started (performance.now()).
import { createInterface } from "node:readline";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const clients = new Map();
const aborts = new Map();
const codes = new Map(); // client name -> resolve(code), while its sign-in waits for the browser

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

async function signin({ client: name, url, redirectUrl, clientName }) {
  // What a host keeps between runs, in memory: the registration, the PKCE verifier, the tokens.
  const kept = {};
  const provider = {
    get redirectUrl() { return redirectUrl; },
    get clientMetadata() {
      return {
        client_name: clientName,
        redirect_uris: [redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    clientInformation: () => kept.client,
    saveClientInformation: (info) => { kept.client = info; },
    tokens: () => kept.tokens,
    saveTokens: (tokens) => { kept.tokens = tokens; },
    redirectToAuthorization: (authorizationUrl) => emit({ event: "authorize", client: name, url: authorizationUrl.toString() }),
    saveCodeVerifier: (verifier) => { kept.verifier = verifier; },
    codeVerifier: () => kept.verifier,
  };
  const client = new Client({ name: `ts-driver-${name}`, version: "1.0.0" });
  let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  try {
    await client.connect(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    const code = await new Promise((resolve) => codes.set(name, resolve));
    await transport.finishAuth(code);
    transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await client.connect(transport);
  }
  clients.set(name, { client, transport, inFlight: new Set(), kept });
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

// The Tasks extension (SEP-2663) by hand: SDK 1.32 knows only 2025-11-25, whose experimental tasks differ.
const TASKS = "io.modelcontextprotocol/tasks";
const taskCalls = new Map(); // call id -> {url, token, taskId}
let nextId = 1;

async function modernRequest({ url, token }, method, params, name) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
    "io.modelcontextprotocol/clientInfo": { name: "ts-driver-tasks", version: "1.0.0" },
  };
  const headers = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    Authorization: `Bearer ${token}`,
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": method,
  };
  if (name !== undefined) headers["Mcp-Name"] = name;
  const body = { jsonrpc: "2.0", id: nextId++, method, params: { ...params, _meta: meta } };
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    return { status: response.status, message: text ? JSON.parse(text) : null };
  }
  // The response's event stream: the JSON-RPC response is the message that carries our id.
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const message = JSON.parse(line.slice(5));
    if (message.id === body.id) return { status: response.status, message };
  }
  return { status: response.status, message: null };
}

async function taskCall({ call: id, url, token, tool, args }) {
  const called = await modernRequest({ url, token }, "tools/call", { name: tool, arguments: args ?? {} }, tool);
  const result = called.message?.result;
  if (result?.resultType !== "task") return emit({ event: "result", call: id, response: called });
  taskCalls.set(id, { url, token, taskId: result.taskId });
  emit({ event: "task", call: id, handle: result });
  let last = result.status;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, result.pollIntervalMs ?? 1000));
    const polled = await modernRequest({ url, token }, "tasks/get", { taskId: result.taskId }, result.taskId);
    const state = polled.message?.result;
    if (!state) return emit({ event: "error", call: id, response: polled });
    if (state.status !== last) emit({ event: "task-state", call: id, state });
    last = state.status;
    if (["completed", "cancelled", "failed"].includes(state.status)) return;
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
    case "signin":
      signin(command).catch((error) => emit({ event: "failed", op: "signin", message: String(error) }));
      return emit({ event: "signing-in", client: command.client });
    case "code":
      codes.get(command.client)(command.code);
      return emit({ event: "code-taken", client: command.client });
    case "tokens": {
      const { kept } = clients.get(command.client);
      return emit({ event: "tokens", client: command.client, tokens: kept.tokens, clientId: kept.client?.client_id });
    }
    case "task-call":
      taskCall(command).catch((error) => emit({ event: "failed", op: "task-call", message: String(error) }));
      return emit({ event: "called", call: command.call });
    case "task-cancel": {
      const task = taskCalls.get(command.call);
      const response = await modernRequest(task, "tasks/cancel", { taskId: task.taskId }, task.taskId);
      return emit({ event: "task-cancelled", call: command.call, response });
    }
    case "task-request": {
      const task = taskCalls.get(command.call);
      const as = { ...task, token: command.token ?? task.token }; // another token's, to be refused
      const response = await modernRequest(as, command.method, command.params ?? {}, task.taskId);
      return emit({ event: "response", call: command.call, response });
    }
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
