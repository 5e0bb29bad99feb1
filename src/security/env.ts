/**
 * The environment a stdio server gets: the minimal base of `buildChildEnv` (which lives with
 * the stdio transport, its first user) plus the server's explicit, already-resolved `env`.
 * This file adds only the check that every variable can be carried by the OS, so a bad config
 * fails with a message naming the server and the variable instead of a bare spawn error.
 */
import type { McpServerConfig } from "../config/types.ts";
import { buildChildEnv } from "../transport/spawn-env.ts";
import { PolicyError, serverLabel } from "./policy.ts";

export { buildChildEnv, type ChildEnvOptions } from "../transport/spawn-env.ts";

/**
 * The child environment for `config`. `resolvedEnv` is `config.env` with every `secret://`
 * reference already resolved; it is required so an unresolved reference is never passed on by
 * accident. Throws {@link PolicyError} `INVALID_ENV` (naming the variable, never its value).
 *
 * ```ts
 * spawnEnv = childEnvFor(config, await resolveSecrets(config.env));
 * ```
 */
export function childEnvFor(
  config: Pick<McpServerConfig, "name">,
  resolvedEnv: Readonly<Record<string, string>>,
  options: { source?: Readonly<Record<string, string | undefined>>; platform?: NodeJS.Platform } = {},
): Record<string, string> {
  const server = config.name;
  for (const [key, value] of Object.entries(resolvedEnv)) {
    const shown = JSON.stringify(key.replace(/\0/g, "\\0"));
    if (key === "" || key.includes("=") || key.includes("\0")) {
      throw new PolicyError(
        "INVALID_ENV",
        `${serverLabel(server)}: environment variable name ${shown} is invalid (empty, or contains "=" or a NUL byte); rename it`,
        { details: { server, variable: key } },
      );
    }
    if (typeof value !== "string" || value.includes("\0")) {
      throw new PolicyError(
        "INVALID_ENV",
        `${serverLabel(server)}: the value of environment variable ${shown} is not a string without NUL bytes; fix it`,
        { details: { server, variable: key } },
      );
    }
  }
  return buildChildEnv({ env: resolvedEnv, source: options.source, platform: options.platform });
}
