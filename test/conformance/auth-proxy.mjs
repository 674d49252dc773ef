// A loopback proxy that adds `Authorization: Bearer <token>` to every request: the conformance
// runner's MCP client sends no headers of its own, and /mcp needs the gateway's bearer token.
import { createServer } from "node:http";
import { Readable } from "node:stream";

const HOP = new Set(["host", "connection", "keep-alive", "transfer-encoding", "content-length"]);

export function authProxy({ target, token }) {
  const server = createServer(async (req, res) => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    headers.set("authorization", `Bearer ${token}`);
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    try {
      const r = await fetch(`${target}${req.url}`, { method: req.method, headers, body, redirect: "manual" });
      const out = {};
      r.headers.forEach((v, k) => {
        if (!HOP.has(k) && k !== "content-encoding") out[k] = v;
      });
      res.writeHead(r.status, out);
      if (r.body) Readable.fromWeb(r.body).pipe(res);
      else res.end();
    } catch (error) {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(error));
    }
  });
  return {
    listen: () => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}`))),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
