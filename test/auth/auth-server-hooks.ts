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
 * Registers hooks in the calling `describe`: before each test a fresh loopback authorization
 * server with its metadata discovered, after each test that server closed.
 */
export function eachAuthServer(): AuthServerUnderTest {
  let current: { as: AuthServerFixture; metadata: AuthorizationServerMetadata } | undefined;
  beforeEach(async () => {
    const as = await AuthServerFixture.start();
    current = { as, metadata: await discoverServerMetadata(as.issuer) };
  });
  afterEach(async () => {
    await current?.as.close();
    current = undefined;
  });
  const now = () => {
    if (current === undefined) throw new Error("eachAuthServer: used outside a test");
    return current;
  };
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
  let current: { as: AuthServerFixture; rs: ProtectedServer } | undefined;
  beforeEach(async () => {
    const as = await AuthServerFixture.start();
    current = { as, rs: await startProtectedServer(as) };
  });
  afterEach(async () => {
    await current?.rs.close();
    await current?.as.close();
    current = undefined;
  });
  const now = () => {
    if (current === undefined) throw new Error("eachProtectedServer: used outside a test");
    return current;
  };
  return {
    get as() {
      return now().as;
    },
    get rs() {
      return now().rs;
    },
  };
}
