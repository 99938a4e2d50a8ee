/**
 * The environment of a harness process: the bridge's own (`HarnessOptions.baseEnv`: PATH, LANG,
 * proxies, the operator's keys, without the bridge's secrets and settings that
 * `withheldFromHarness` in the bridge's config names), then the adapter's settings, then
 * `HarnessOptions.env` (which wins).
 *
 * Model endpoint, the same names for both harnesses (from `HarnessOptions.env`, else the bridge's
 * own environment):
 * - `SHROOMS_MODEL_BASE_URL`: the provider's base URL, with or without `/v1` (`modelBaseUrl` gives
 *   each API its form). Claude Code: `ANTHROPIC_BASE_URL` without it. pi: the `baseUrl` of a
 *   generated `models.json` provider, with it for `openai-completions`, without for
 *   `anthropic-messages`. OpenCode and Codex (OpenAI APIs): with it.
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

/**
 * The base URL as an API's client wants it, from what a person wrote with or without `/v1`: the
 * OpenAI-compatible clients (pi's `openai-completions`, OpenCode, Codex) append paths to a URL
 * ending in `/v1`; Anthropic's clients (Claude Code, pi's `anthropic-messages`) add `/v1`
 * themselves. Trailing slashes go.
 */
export function modelBaseUrl(raw: string, api: 'openai' | 'anthropic'): string {
  const bare = raw.trim().replace(/\/+$/, '').replace(/\/v1$/, '');
  return api === 'openai' ? `${bare}/v1` : bare;
}
