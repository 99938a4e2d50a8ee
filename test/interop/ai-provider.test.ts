/**
 * The Vercel AI SDK (`ai`) with the community A2A provider `a2a-ai-provider` (built on
 * `@a2a-js/sdk` 0.3): a session is a model whose id is its card's URL. `generateText` sends
 * `message/send` (blocking), `streamText` sends `message/stream`.
 */
import { expect, inject, it, vi } from 'vitest';
import { generateText, streamText } from 'ai';
import { a2a } from 'a2a-ai-provider';

const cardUrl = `${inject('endpoint')}.well-known/agent-card.json`;

// The provider logs every event with console.log; keep the test output readable, but keep the
// events so a failure shows what the stream carried.
const logged: string[] = [];
vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(args.map((a) => JSON.stringify(a)).join(' ')));

it('generateText gets the demo session’s answer as the text', async () => {
  const { text } = await generateText({ model: a2a(cardUrl), prompt: 'hello from the AI SDK' });
  expect(text).toBe('hello from the AI SDK');
});

it('streamText streams the answer', async () => {
  logged.length = 0;
  const result = streamText({ model: a2a(cardUrl), prompt: 'streamed through the AI SDK' });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  expect(text, `the provider saw:\n${logged.join('\n').slice(0, 4000)}`).toBe('streamed through the AI SDK');
});
