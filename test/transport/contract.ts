/**
 * The contract every `Transport` keeps (the rules written on src/transport/transport.ts), as
 * one set of cases run against each implementation: contract.test.ts calls
 * {@link transportContract} once per transport with a factory that builds a fresh transport
 * and the real other end it talks to (a child process, a loopback socket or server, the other
 * half of a pair).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Transport } from "../../src/transport/transport.ts";

/** One transport under test and the far end it is connected to. */
export interface ContractSubject {
  transport: Transport;
  /**
   * Ends the connection from the far side (the child exits, the socket or stream ends, the
   * server goes away). Absent with `peer: "none"` (see {@link ContractOptions}).
   */
  closePeer?(): Promise<void>;
  /** What the owner does right after `start()` resolves (the SSE server opens the stream). */
  afterStart?(): void;
  /** Stops whatever the fixture started (servers, children by pid); runs after each case. */
  dispose(): Promise<void>;
}

export interface ContractOptions {
  /**
   * The transport is connected from birth and accepts `send()` before `start()` (the
   * in-memory pair); every other transport rejects it with `NOT_CONNECTED`.
   */
  sendsBeforeStart?: boolean;
  /**
   * What the far side closing does. `ends` (default): the transport ends, `onclose` once.
   * `outlived`: request/response transports (Streamable HTTP) have no connection whose end ends
   * them; sends fail with a typed error and the transport stays until close(). `none`: nothing
   * on the far side can end it (a server's session transport, an ACP tunnel: their owner closes
   * them), so the case does not apply.
   */
  peer?: "ends" | "outlived" | "none";
}

const note = { jsonrpc: "2.0", method: "notifications/contract" } as const;

/** Counts `onclose` calls and resolves `closed` on the first. */
function watchClose(t: Transport): { calls: Array<Error | undefined>; closed: Promise<void> } {
  const calls: Array<Error | undefined> = [];
  let resolve!: () => void;
  const closed = new Promise<void>((r) => (resolve = r));
  t.onclose = (reason) => {
    calls.push(reason);
    resolve();
  };
  t.onerror = () => undefined;
  return { calls, closed };
}

/** Settles to the error's `{ name, code }`, or "sent" when the promise resolved. */
async function outcome(p: Promise<void>): Promise<string | { name: string; code: unknown }> {
  try {
    await p;
    return "sent";
  } catch (err) {
    const e = err as { name: string; code?: unknown };
    return { name: e.name, code: e.code };
  }
}

/** Registers the contract's cases for one transport under `name`. */
export function transportContract(name: string, make: () => Promise<ContractSubject>, options: ContractOptions = {}): void {
  const withSubject = (title: string, body: (s: ContractSubject) => Promise<void>): void => {
    test(`${name}: ${title}`, async () => {
      const s = await make();
      try {
        await body(s);
      } finally {
        await s.transport.close();
        await s.dispose();
      }
    });
  };

  const start = async (s: ContractSubject): Promise<void> => {
    await s.transport.start();
    s.afterStart?.();
  };

  withSubject("a second start() rejects with INVALID_STATE", async (s) => {
    const { transport } = s;
    watchClose(transport);
    await start(s);
    await assert.rejects(transport.start(), { name: "BridgeError", code: "INVALID_STATE" });
  });

  if (options.sendsBeforeStart) {
    withSubject("send() before start() is accepted (nothing to open)", async ({ transport }) => {
      watchClose(transport);
      await transport.send(note);
    });
  } else {
    withSubject("send() before start() rejects with NOT_CONNECTED", async ({ transport }) => {
      watchClose(transport);
      await assert.rejects(transport.send(note), { name: "BridgeError", code: "NOT_CONNECTED" });
    });
  }

  withSubject("send() after close() rejects with CLOSED", async (s) => {
    const { transport } = s;
    watchClose(transport);
    await start(s);
    await transport.close();
    await assert.rejects(transport.send(note), { name: "BridgeError", code: "CLOSED" });
  });

  withSubject("start() after close() rejects with CLOSED", async ({ transport }) => {
    const { calls } = watchClose(transport);
    await transport.close();
    await assert.rejects(transport.start(), { name: "BridgeError", code: "CLOSED" });
    assert.deepEqual(calls, [undefined]);
  });

  withSubject("close() twice returns the same promise and calls onclose once, without a reason", async (s) => {
    const { transport } = s;
    const { calls } = watchClose(transport);
    await start(s);
    const first = transport.close();
    const second = transport.close();
    assert.equal(first, second);
    await first;
    assert.equal(transport.close(), first);
    assert.deepEqual(calls, [undefined]);
  });

  withSubject("close() during send(): the send settles, sent or CLOSED, and close resolves", async (s) => {
    const { transport } = s;
    const { calls } = watchClose(transport);
    await start(s);
    const sent = outcome(transport.send(note));
    await transport.close();
    const got = await sent;
    if (got !== "sent") assert.deepEqual(got, { name: "BridgeError", code: "CLOSED" });
    assert.deepEqual(calls, [undefined]);
  });

  if (options.peer === "outlived") {
    withSubject("the server going away fails sends with a BridgeError; onclose waits for close()", async (s) => {
      const { calls } = watchClose(s.transport);
      await start(s);
      await s.closePeer!();
      await assert.rejects(s.transport.send(note), { name: "BridgeError" });
      assert.deepEqual(calls, []);
      await s.transport.close();
      assert.deepEqual(calls, [undefined]);
    });
  } else if (options.peer !== "none") {
    withSubject("the peer closing first calls onclose once; then send rejects CLOSED and close resolves", async (s) => {
      const { calls, closed } = watchClose(s.transport);
      await start(s);
      await s.closePeer!();
      await closed;
      await assert.rejects(s.transport.send(note), { name: "BridgeError", code: "CLOSED" });
      await s.transport.close();
      assert.equal(calls.length, 1);
      if (calls[0] !== undefined) assert.equal(calls[0].name, "BridgeError");
    });
  }

  withSubject("close() before start() calls onclose once", async ({ transport }) => {
    const { calls } = watchClose(transport);
    await transport.close();
    await transport.close();
    assert.deepEqual(calls, [undefined]);
  });
}
