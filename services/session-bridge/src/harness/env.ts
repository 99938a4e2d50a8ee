/**
 * The environment of a harness process: the bridge's own (`HarnessOptions.baseEnv`: PATH, LANG,
 * proxies, the operator's keys, without the markers of a Claude Code session the bridge itself may
 * run in; see `harnessBaseEnv` in the bridge's config), then the adapter's settings, then
 * `HarnessOptions.env` (which wins).
 *
 * Model endpoint, the same names for both harnesses (from `HarnessOptions.env`, else the bridge's
 * own environment):
 * - `SHROOMS_MODEL_BASE_URL`: the provider's base URL. Claude Code: becomes `ANTHROPIC_BASE_URL`
 *   (`http://host:port`, no `/v1`). pi: the `baseUrl` of a generated `models.json` provider, used as
 *   pi uses it (for `openai-completions`, with the `/v1`).
 * - `SHROOMS_MODEL_API_KEY`: its key (Claude: `ANTHROPIC_API_KEY`; pi: the provider's `apiKey`).
 * - `SHROOMS_MODEL`: the model id when `HarnessOptions.model` is absent.
 * - `SHROOMS_MODEL_API` (pi only): `openai-completions` (default) or `anthropic-messages`.
 * - `SHROOMS_CLAUDE_BIN` / `SHROOMS_PI_BIN`: another executable than the pinned dev dependency.
 */
import type { HarnessOptions } from './types.js';

export const MODEL_ENV = {
  baseUrl: 'SHROOMS_MODEL_BASE_URL',
  apiKey: 'SHROOMS_MODEL_API_KEY',
  model: 'SHROOMS_MODEL',
  api: 'SHROOMS_MODEL_API',
} as const;

/** A model setting from the harness env, else the bridge's own environment. */
export function modelSetting(
  o: Pick<HarnessOptions, 'env' | 'baseEnv'>,
  name: (typeof MODEL_ENV)[keyof typeof MODEL_ENV],
): string | undefined {
  return o.env[name] ?? o.baseEnv[name];
}
