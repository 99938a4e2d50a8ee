/**
 * The Vercel AI SDK (`ai`) with the community A2A provider `a2a-ai-provider` (built on
 * `@a2a-js/sdk` 0.3): a session is a model whose id is its card's URL. `generateText` sends
 * `message/send` (blocking), `streamText` sends `message/stream`.
 */
import { expect, inject, it, vi } from 'vitest';
import { generateText, streamText } from 'ai';
import { a2a } from 'a2a-ai-provider';

const cardUrl = `${inject('endpoint')}.well-known/agent-card.json`;

// The provider logs every event with console.log; keep the test output readable.
vi.spyOn(console, 'log').mockImplementation(() => {});

it('generateText gets the demo session’s answer as the text', async () => {
  const { text } = await generateText({ model: a2a(cardUrl), prompt: 'hello from the AI SDK' });
  expect(text).toBe('hello from the AI SDK');
});

it('streamText streams the answer', async () => {
  const result = streamText({ model: a2a(cardUrl), prompt: 'streamed through the AI SDK' });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  expect(text).toBe('streamed through the AI SDK');
});
