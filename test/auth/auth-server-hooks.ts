/** The per-test authorization server most OAuth tests start the same way. */
import { afterEach, beforeEach } from "node:test";
import { AuthServerFixture } from "../../fixtures/oauth/authorization-server.ts";
import { startProtectedServer, type ProtectedServer } from "../../fixtures/oauth/protected-server.ts";
import { discoverServerMetadata, type AuthorizationServerMetadata } from "../../src/auth/server-metadata.ts";

/** What {@link eachAuthServer} hands the tests: valid inside a test, replaced before each one. */
export interface AuthServerUnderTest {
  readonly as: AuthServerFixture;
  readonly metadata: AuthorizationServerMetadata;
}

/**
 * Registers hooks in the calling file or `describe`: `start` before each test, `close` after
 * it; the getter gives the current value, and throws outside a test (`name` says whose).
 */
function eachTest<T>(name: string, start: () => Promise<T>, close: (value: T) => Promise<void>): () => T {
  let current: T | undefined;
  beforeEach(async () => {
    current = await start();
  });
  afterEach(async () => {
    if (current !== undefined) await close(current);
    current = undefined;
  });
  return () => {
    if (current === undefined) throw new Error(`${name}: used outside a test`);
    return current;
  };
}

/**
 * Registers hooks in the calling `describe`: before each test a fresh loopback authorization
 * server with its metadata discovered, after each test that server closed.
 */
export function eachAuthServer(): AuthServerUnderTest {
  const now = eachTest(
    "eachAuthServer",
    async () => {
      const as = await AuthServerFixture.start();
      return { as, metadata: await discoverServerMetadata(as.issuer) };
    },
    (c) => c.as.close(),
  );
  return {
    get as() {
      return now().as;
    },
    get metadata() {
      return now().metadata;
    },
  };
}

/** What {@link eachProtectedServer} hands the tests: valid inside a test, replaced before each one. */
export interface ProtectedServerUnderTest {
  readonly as: AuthServerFixture;
  readonly rs: ProtectedServer;
}

/**
 * Registers hooks in the calling file or `describe`: before each test a fresh loopback
 * authorization server and the protected echo server it guards, after each test both closed.
 */
export function eachProtectedServer(): ProtectedServerUnderTest {
  const now = eachTest(
    "eachProtectedServer",
    async () => {
      const as = await AuthServerFixture.start();
      return { as, rs: await startProtectedServer(as) };
    },
    async (c) => {
      await c.rs.close();
      await c.as.close();
    },
  );
  return {
    get as() {
      return now().as;
    },
    get rs() {
      return now().rs;
    },
  };
}
