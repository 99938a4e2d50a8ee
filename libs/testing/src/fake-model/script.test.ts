import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nest, parseScript, plan, chain, say, substitute, useTool, type Entry } from './script.js';
import { anthropicEntries } from './anthropic.js';
import { geminiEntries } from './gemini.js';
import { resolveToolName } from './script.js';
import { startFakeModel, type FakeModel } from './server.js';

const prompt = (text: string): Entry => ({ kind: 'prompt', text });
const result = (text: string): Entry => ({ kind: 'toolResult', text });
const call: Entry = { kind: 'assistant', toolCalls: 1, text: '' };
const header = '[shrooms task review:m-1 from laptop (laptop/webapp)]';

describe('the directive language', () => {
  it('answers a plain prompt with FAKE_REPLY and the prompt', () => {
    expect(plan({ entries: [prompt('hello')], offeredTools: [], n: 3 }).reply).toEqual({
      kind: 'text',
      text: 'FAKE_REPLY(3): hello',
      slow: false,
    });
  });

  it('calls the tool, then quotes its result', () => {
    const script = 'USE_TOOL:echo {"text":"hi"}';
    expect(plan({ entries: [prompt(script)], offeredTools: ['echo'], n: 1 }).reply).toMatchObject({
      kind: 'tool',
      name: 'echo',
      input: { text: 'hi' },
    });
    expect(plan({ entries: [prompt(script), call, result('ECHO hi')], offeredTools: ['echo'], n: 2 }).reply).toMatchObject({
      kind: 'text',
      text: 'FAKE_REPLY(2): tool returned: ECHO hi',
    });
  });

  it('plays THEN steps one per tool round and fills $TASK from the task header', () => {
    const script = chain(
      useTool('ask_agent', { to: 'b', text: 'x' }),
      useTool('task_update', { task: '$TASK', status: 'done', text: 'got $RESULT' }),
      say('all done'),
    );
    const entries = [prompt(`${header}\n${script}\nFinish with task_update.`)];
    const offered = ['Bash', 'mcp__shrooms__ask_agent', 'mcp__shrooms__task_update'];
    expect(plan({ entries, offeredTools: offered, n: 1 }).reply).toMatchObject({ kind: 'tool', name: 'mcp__shrooms__ask_agent' });
    entries.push(call, result('B says hi'));
    expect(plan({ entries, offeredTools: offered, n: 2 }).reply).toMatchObject({
      kind: 'tool',
      name: 'mcp__shrooms__task_update',
      input: { task: 'review:m-1', status: 'done', text: 'got B says hi' },
    });
    entries.push(call, result('ok'));
    expect(plan({ entries, offeredTools: offered, n: 3 }).reply).toMatchObject({ kind: 'text', text: 'all done' });
  });

  it('keeps a nested script intact for the next model, one $ per hop', () => {
    const inner = useTool('task_update', { task: '$TASK', status: 'done', text: 'C: FAIL SLOW THEN x' });
    const middle = chain(
      useTool('ask_agent', { to: 'c', text: nest(inner) }),
      useTool('task_update', { task: '$TASK', status: 'done', text: '$RESULT' }),
    );
    const outer = useTool('ask_agent', { to: 'b', text: nest(middle) });
    const s = parseScript(outer);
    expect(s).toMatchObject({ fail: false, slow: false, steps: [{ kind: 'tool', name: 'ask_agent' }] });
    const a = plan({ entries: [prompt(`${header}\n${outer}`)], offeredTools: [], n: 1 }).reply as unknown as { input: { text: string } };
    expect(a.input.text).toBe(middle);
    const b = plan({ entries: [prompt(`[shrooms task b:m-2 from laptop (laptop/a)]\n${a.input.text}`)], offeredTools: [], n: 2 })
      .reply as unknown as { input: { text: string } };
    expect(b.input.text).toBe(inner);
    const c = plan({ entries: [prompt(`[shrooms task c:m-3 from laptop (laptop/b)]\n${b.input.text}`)], offeredTools: [], n: 3 }).reply;
    expect(c).toMatchObject({ kind: 'tool', input: { task: 'c:m-3' } });
  });

  it('fails or slows the turn when FAIL or SLOW stands outside a script', () => {
    expect(plan({ entries: [prompt('this will FAIL')], offeredTools: [], n: 1 }).reply).toEqual({ kind: 'fail', status: 500 });
    expect(plan({ entries: [prompt('please answer SLOW')], offeredTools: [], n: 1 }).reply).toMatchObject({ kind: 'text', slow: true });
    expect(parseScript('USE_TOOL:x {} THEN FAIL:529').steps[1]).toEqual({ kind: 'fail', status: 529 });
    expect(parseScript('SLOW SAY:hi').steps[0]).toEqual({ kind: 'say', text: 'hi', slow: true });
  });

  it('reads the task id of an answer to a blocked task', () => {
    const entries = [prompt(`[shrooms task review:m 9 — more from pi5.home (pi5/jimmy)]\n${useTool('task_update', { task: '$TASK' })}`)];
    expect(plan({ entries, offeredTools: [], n: 1 }).reply).toMatchObject({ input: { task: 'review:m 9' } });
  });

  it('tolerates broken JSON and leaves unknown placeholders alone', () => {
    const s = parseScript('USE_TOOL:x {"a": THEN SAY:ok');
    expect(s.errors.length).toBe(1);
    expect(s.steps[0]).toMatchObject({ kind: 'tool', input: {} });
    expect(substitute('$TASK $$RESULT', {})).toBe('$TASK $RESULT');
  });

  it("skips Claude Code's system reminders and trailing system messages", () => {
    const entries = anthropicEntries({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>\nctx\n</system-reminder>' },
            { type: 'text', text: 'real prompt' },
          ],
        },
        { role: 'system', content: 'Available agent types…' },
      ],
    });
    expect(entries).toEqual([prompt('real prompt')]);
  });

  it('reads a prompt that shares its message with the result of a cancelled tool call', () => {
    const content = [
      { type: 'tool_result', tool_use_id: 't1', content: 'rejected', is_error: true },
      { type: 'text', text: '[Request interrupted by user for tool use]' },
      { type: 'text', text: 'please answer SLOW' },
    ];
    const entries = anthropicEntries({
      messages: [
        { role: 'user', content: 'USE_TOOL:echo {}' },
        { role: 'assistant', content: [{ type: 'tool_use' }] },
        { role: 'user', content },
      ],
    });
    expect(plan({ entries, offeredTools: [], n: 5 }).reply).toMatchObject({
      kind: 'text',
      text: 'FAKE_REPLY(5): please answer SLOW',
      slow: true,
    });
  });

  it('takes the newest block when Claude Code merged an interrupted or failed prompt with the next', () => {
    const merged = [
      { type: 'text', text: 'third SLOW' },
      { type: 'text', text: '[Request interrupted by user]' },
      { type: 'text', text: 'after interrupt' },
    ];
    expect(anthropicEntries({ messages: [{ role: 'user', content: merged }] })).toEqual([prompt('after interrupt')]);
    const failed = [
      { type: 'text', text: 'this will FAIL\n' },
      { type: 'text', text: 'hello after fail' },
    ];
    expect(anthropicEntries({ messages: [{ role: 'user', content: failed }] })).toEqual([prompt('hello after fail')]);
  });
});

describe('tool names and the Gemini dialect', () => {
  it("resolves a tool name under each agent's MCP prefix", () => {
    expect(resolveToolName('task_update', ['mcp__shrooms__task_update'])).toBe('mcp__shrooms__task_update');
    expect(resolveToolName('task_update', ['read_file', 'mcp_shrooms_task_update'])).toBe('mcp_shrooms_task_update');
    expect(resolveToolName('task_update', ['bash', 'shrooms_task_update'])).toBe('shrooms_task_update');
    expect(resolveToolName('ask_agent', ['mcp_shrooms_task_update'])).toBe('ask_agent');
  });

  it("reads Gemini contents: prompts, calls, and function responses without Gemini CLI's untrusted tags", () => {
    const entries = geminiEntries({
      contents: [
        { role: 'user', parts: [{ text: '<session_context>setup</session_context>' }] },
        { role: 'user', parts: [{ text: 'USE_TOOL:echo {}' }] },
        { role: 'model', parts: [{ functionCall: { name: 'mcp_x_echo', args: {} } }] },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'mcp_x_echo', response: { output: '<untrusted_context>\nECHO hi\n</untrusted_context>' } } }],
        },
      ],
    });
    expect(entries.slice(1)).toEqual([
      { kind: 'prompt', text: 'USE_TOOL:echo {}' },
      { kind: 'assistant', toolCalls: 1, text: '' },
      { kind: 'toolResult', text: 'ECHO hi' },
    ]);
  });
});

describe('the fake model server', () => {
  let fake: FakeModel;
  beforeAll(async () => {
    fake = await startFakeModel({ slow: { delayMs: 5 } });
  });
  afterAll(() => fake.close());

  it('answers Anthropic Messages, streamed, and records the request', async () => {
    const res = await fetch(`${fake.url}/v1/messages?beta=true`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'please answer SLOW' }] }),
    });
    const text = await res.text();
    expect(text).toContain('event: message_stop');
    const deltas = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join('');
    expect(deltas).toMatch(/^FAKE_REPLY\(\d+\): please answer SLOW$/);
    expect(fake.requests.at(-1)).toMatchObject({ api: 'anthropic', stream: true, reply: { kind: 'text', slow: true } });
  });

  it('answers OpenAI Chat Completions with a tool call, not streamed', async () => {
    const res = await fetch(`${fake.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'USE_TOOL:echo {"a":1}' }],
        tools: [{ type: 'function', function: { name: 'mcp__x__echo' } }],
      }),
    });
    const body = (await res.json()) as { choices: { message: { tool_calls: { function: { name: string; arguments: string } }[] } }[] };
    expect(body.choices[0]!.message.tool_calls[0]!.function).toEqual({ name: 'mcp__x__echo', arguments: '{"a":1}' });
  });

  it('answers the Gemini API streamed, slowly on SLOW, with the model from the path', async () => {
    const res = await fetch(`${fake.url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse`, {
      method: 'POST',
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'SLOW hi' }] }] }),
    });
    const chunks = (await res.text()).split('\r\n\r\n').filter(Boolean);
    const text = chunks
      .map((c) => JSON.parse(c.slice('data: '.length)) as { candidates: { content: { parts: { text: string }[] } }[] })
      .map((r) => r.candidates[0]!.content.parts[0]!.text)
      .join('');
    expect(text).toMatch(/^FAKE_REPLY\(\d+\): SLOW hi$/);
    expect(chunks.length).toBeGreaterThan(1);
    expect(fake.requests.at(-1)).toMatchObject({ api: 'gemini', stream: true, model: 'gemini-x' });
  });

  it('answers a Gemini function call, not streamed', async () => {
    const res = await fetch(`${fake.url}/v1beta/models/gemini-x:generateContent`, {
      method: 'POST',
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'USE_TOOL:echo {"a":1}' }] }],
        tools: [{ functionDeclarations: [{ name: 'mcp_x_echo' }] }],
      }),
    });
    const body = (await res.json()) as { candidates: { content: { parts: { functionCall: { name: string; args: unknown } }[] } }[] };
    expect(body.candidates[0]!.content.parts[0]!.functionCall).toMatchObject({ name: 'mcp_x_echo', args: { a: 1 } });
  });

  it('answers FAIL with HTTP 500', async () => {
    const res = await fetch(`${fake.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'FAIL' }] }),
    });
    expect(res.status).toBe(500);
  });
});
