// HTTP helpers for the bench: JSON calls with a bearer token, wall-clock timing, an SSE reader.

export class Client {
  /** `operatorToken` (default: the first client's token, the operator's) goes with every `/__bench/*` call. */
  constructor(baseUrl, token, operatorToken = token) {
    this.baseUrl = baseUrl;
    this.token = token;
    this.operatorToken = operatorToken;
  }

  withToken(token) {
    return new Client(this.baseUrl, token, this.operatorToken);
  }

  /** Returns { status, body, ms }; throws with the server's problem text on an unexpected status. */
  async call(method, path, body, { expect = [200, 201, 202], headers = {} } = {}) {
    const init = { method, headers: { ...headers } };
    if (this.token) init.headers.authorization = `Bearer ${this.token}`;
    if (path.startsWith("/__bench/") && this.operatorToken) init.headers["x-vigil-operator-token"] = this.operatorToken;
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const started = performance.now();
    const res = await fetch(this.baseUrl + path, init);
    const text = await res.text();
    const ms = performance.now() - started;
    if (!expect.includes(res.status)) {
      const err = new Error(`${method} ${path} ${body ? JSON.stringify(body) : ""} → HTTP ${res.status}: ${text.slice(0, 1000)}`);
      err.status = res.status;
      err.body = text;
      throw err;
    }
    let parsed = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON (fine for non-JSON endpoints)
    }
    return { status: res.status, body: parsed, ms };
  }

  /** POST /__bench/agents/:id/op, timed from outside; returns wall milliseconds. */
  async benchOp(agentId, op) {
    const { body, ms } = await this.call("POST", `/__bench/agents/${agentId}/op`, op, { expect: [200] });
    const expected = op.count ?? op.iterations;
    if (!body || body.done !== expected) throw new Error(`bench op ${JSON.stringify(op)} answered ${JSON.stringify(body)}`);
    return ms;
  }
}

/**
 * Opens an SSE stream and calls onFrame({ id, event, data, at }) for each frame, where `at` is
 * performance.now() when the chunk carrying the frame's end arrived. Returns { ready, close }.
 */
export function openSse(url, token, onFrame) {
  const controller = new AbortController();
  let closed = false;
  let resolveReady;
  let rejectReady;
  const ready = new Promise((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  const done = (async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" }, signal: controller.signal });
    if (res.status !== 200) throw new Error(`SSE ${url} → HTTP ${res.status}: ${(await res.text()).slice(0, 500)}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let sawConnected = false;
    for (;;) {
      const { value, done: finished } = await reader.read();
      if (finished) break;
      const at = performance.now();
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const raw = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const frame = { id: undefined, event: "message", data: "", at, comment: false };
        let dataLines = [];
        for (const line of raw.split("\n")) {
          if (line.startsWith(":")) {
            frame.comment = true;
            if (!sawConnected && line.includes("connected")) {
              sawConnected = true;
              resolveReady();
            }
            continue;
          }
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") frame.id = val;
          else if (field === "event") frame.event = val;
          else if (field === "data") dataLines.push(val);
        }
        if (dataLines.length === 0) continue;
        frame.data = dataLines.join("\n");
        try {
          frame.data = JSON.parse(frame.data);
        } catch {
          // keep raw text
        }
        onFrame(frame);
      }
    }
  })().catch((err) => {
    rejectReady(err);
    if (!closed) throw err;
  });
  return {
    ready,
    done,
    close() {
      closed = true;
      controller.abort();
    },
  };
}
