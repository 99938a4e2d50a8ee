/** The dashboard's stylesheet, written into its page (assets/page.ts; no external assets: works offline). */
export const APP_CSS = String.raw`
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --panel: #ffffff; --ink: #1d2230; --muted: #646b7a; --line: #dfe3ea; --accent: #2f6fdb;
  --st-submitted: #8a8f98; --st-working: #2f6fdb; --st-input: #c98000; --st-completed: #2e9d57;
  --st-failed: #d64545; --st-canceled: #6b6f76; --st-rejected: #9b51e0; --held: #e8590c; --stalled: #d64545;
  --shadow: 0 1px 2px rgba(20, 30, 50, .06);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #14171d; --panel: #1c2029; --ink: #e6e9ef; --muted: #9aa3b2; --line: #2c3240; --accent: #6d9ef0;
    --st-working: #5b8ff0; --st-completed: #45b872; --shadow: none; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
button { font: inherit; cursor: pointer; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); color: var(--ink); padding: .3em .8em; min-height: 34px; }
button:hover { border-color: var(--accent); }
button.danger { color: var(--st-failed); border-color: color-mix(in srgb, var(--st-failed) 45%, var(--line)); }
button.confirm { background: var(--st-failed); color: #fff; border-color: var(--st-failed); }
button.go { color: var(--st-completed); border-color: color-mix(in srgb, var(--st-completed) 45%, var(--line)); }
button:disabled { opacity: .55; cursor: default; }
select, input[type=search] { font: inherit; padding: .3em .5em; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); color: var(--ink); min-height: 34px; max-width: 100%; }
pre, code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: .88em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3em 0 0; }

header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .4em 1em; padding: .7em 1em; background: var(--panel); border-bottom: 1px solid var(--line); }
header.top h1 { font-size: 1.1em; margin: 0; letter-spacing: .01em; }
header.top h1 .machine { color: var(--muted); font-weight: 500; }
.live { display: inline-flex; align-items: center; gap: .35em; color: var(--muted); font-size: .9em; }
.live::before { content: ""; width: .6em; height: .6em; border-radius: 50%; background: var(--st-canceled); }
.live[data-live="1"]::before { background: var(--st-completed); box-shadow: 0 0 0 3px color-mix(in srgb, var(--st-completed) 25%, transparent); }
.viewer { margin-left: auto; font-size: .85em; color: var(--muted); border: 1px solid var(--line); border-radius: 999px; padding: .1em .7em; }
.viewer.owner { color: var(--st-completed); border-color: color-mix(in srgb, var(--st-completed) 40%, var(--line)); }

nav.tabs { display: flex; gap: .2em; padding: 0 .6em; background: var(--panel); border-bottom: 1px solid var(--line); overflow-x: auto; scrollbar-width: none; position: sticky; top: 0; z-index: 2; }
nav.tabs a { padding: .65em .8em; color: var(--muted); border-bottom: 2px solid transparent; white-space: nowrap; }
nav.tabs a.on { color: var(--ink); border-bottom-color: var(--accent); font-weight: 600; }
nav.tabs a:hover { text-decoration: none; color: var(--ink); }
.count { display: inline-block; min-width: 1.5em; padding: 0 .4em; margin-left: .35em; border-radius: 999px; background: var(--line); color: var(--ink); font-size: .8em; text-align: center; font-weight: 600; }
.count.hot { background: var(--st-failed); color: #fff; }

main { padding: 1em; max-width: 1100px; margin: 0 auto; }
h2 { font-size: 1.05em; margin: 1.2em 0 .6em; }
h2:first-child { margin-top: .2em; }
.empty { color: var(--muted); padding: 1.5em 0; text-align: center; }
.hint { color: var(--muted); font-size: .9em; margin: .1em 0 .8em; }
.error { color: var(--st-failed); border: 1px solid color-mix(in srgb, var(--st-failed) 40%, var(--line)); background: color-mix(in srgb, var(--st-failed) 8%, var(--panel)); padding: .6em .8em; border-radius: 8px; margin: .5em 0; }
.toast { position: fixed; bottom: 1em; left: 50%; transform: translateX(-50%); background: var(--ink); color: var(--bg); padding: .55em 1em; border-radius: 8px; max-width: calc(100% - 2em); z-index: 5; }
.toast.bad { background: var(--st-failed); color: #fff; }

.filters { display: flex; flex-wrap: wrap; gap: .5em; align-items: center; margin-bottom: .8em; }
.filters .total { color: var(--muted); margin-left: auto; font-size: .9em; }
.filters input[type=search] { flex: 1 1 10em; }
.pager { display: flex; justify-content: space-between; gap: .5em; margin-top: .8em; }

.rows { display: grid; gap: .5em; }
.task { background: var(--panel); border: 1px solid var(--line); border-left: 4px solid var(--st-color, var(--line)); border-radius: 8px; padding: .55em .8em; box-shadow: var(--shadow); min-width: 0; }
.task .l1 { display: flex; flex-wrap: wrap; align-items: center; gap: .3em .6em; }
.task .tid { font-weight: 600; overflow-wrap: anywhere; }
.task .age { margin-left: auto; color: var(--muted); font-size: .85em; white-space: nowrap; }
.task .who { color: var(--muted); font-size: .9em; margin-top: .15em; overflow-wrap: anywhere; }
.task .who b { color: var(--ink); font-weight: 500; }
.task .text { margin-top: .25em; overflow-wrap: anywhere; }
.task .worker { margin-top: .2em; color: var(--muted); font-size: .9em; overflow-wrap: anywhere; }
.task .worker::before { content: "last worker line: "; font-style: italic; }
.task .result { margin-top: .2em; font-size: .9em; overflow-wrap: anywhere; }
.task .result::before { content: "result: "; color: var(--muted); font-style: italic; }
.actions { display: flex; flex-wrap: wrap; gap: .4em; margin-top: .45em; }

.pill { display: inline-block; font-size: .78em; font-weight: 600; padding: .05em .6em; border-radius: 999px; color: #fff; background: var(--st-color, var(--st-submitted)); white-space: nowrap; text-transform: lowercase; }
.badge { display: inline-block; font-size: .75em; padding: 0 .5em; border-radius: 999px; border: 1px solid var(--line); color: var(--muted); white-space: nowrap; }
.badge.held { color: var(--held); border-color: var(--held); font-weight: 600; }
.badge.stalled { color: var(--stalled); border-color: var(--stalled); font-weight: 600; }
.badge.warn { color: var(--st-input); border-color: var(--st-input); }
.st-TASK_STATE_SUBMITTED { --st-color: var(--st-submitted); }
.st-TASK_STATE_WORKING { --st-color: var(--st-working); }
.st-TASK_STATE_INPUT_REQUIRED, .st-TASK_STATE_AUTH_REQUIRED { --st-color: var(--st-input); }
.st-TASK_STATE_COMPLETED { --st-color: var(--st-completed); }
.st-TASK_STATE_FAILED { --st-color: var(--st-failed); }
.st-TASK_STATE_CANCELED { --st-color: var(--st-canceled); }
.st-TASK_STATE_REJECTED { --st-color: var(--st-rejected); }
.task.is-held { border-left-color: var(--held); }

.agents { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: .7em; }
.agent { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: .7em .85em; box-shadow: var(--shadow); min-width: 0; }
.agent .name { font-weight: 650; overflow-wrap: anywhere; }
.agent .name .m { color: var(--muted); font-weight: 500; }
.agent .row { display: flex; flex-wrap: wrap; align-items: center; gap: .35em .6em; margin-top: .35em; font-size: .9em; }
.agent .cwd { color: var(--muted); overflow-wrap: anywhere; margin-top: .3em; }
.dot { display: inline-block; width: .65em; height: .65em; border-radius: 50%; background: var(--st-submitted); }
.ag-idle .dot { background: var(--st-completed); }
.ag-working .dot { background: var(--st-working); }
.ag-waiting .dot { background: var(--st-input); }
.ag-starting .dot, .ag-stopped .dot { background: var(--st-canceled); }
.signal { flex: 1 1 80px; height: 6px; background: var(--line); border-radius: 3px; overflow: hidden; min-width: 60px; }
.signal > i { display: block; height: 100%; background: var(--st-completed); transition: width .9s linear; }
.signal.weak > i { background: var(--st-input); }
.fresh { color: var(--muted); font-size: .85em; white-space: nowrap; }
.machine-h { color: var(--muted); font-size: .85em; text-transform: uppercase; letter-spacing: .06em; margin: 1em 0 .4em; }

.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: .4em 1em; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .7em .9em; }
.facts div { min-width: 0; overflow-wrap: anywhere; }
.facts dt { color: var(--muted); font-size: .8em; }
.facts dd { margin: 0; }
.detail-head { display: flex; flex-wrap: wrap; align-items: center; gap: .5em .8em; margin-bottom: .7em; }
.detail-head h2 { margin: 0; overflow-wrap: anywhere; }
.msgs { display: grid; gap: .5em; }
.msg { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .5em .8em; }
.msg .meta { color: var(--muted); font-size: .82em; display: flex; gap: .6em; flex-wrap: wrap; }
.msg.agent { border-left: 3px solid var(--st-working); }
.msg.user { border-left: 3px solid var(--st-submitted); }
details.md { margin-top: .8em; }
details.md summary { cursor: pointer; color: var(--muted); }
table.kv { border-collapse: collapse; width: 100%; margin-top: .4em; font-size: .88em; }
table.kv td { border-top: 1px solid var(--line); padding: .25em .4em; vertical-align: top; overflow-wrap: anywhere; }
table.kv td:first-child { color: var(--muted); white-space: nowrap; width: 1%; }

.chain { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: .6em .8em; margin-bottom: .7em; box-shadow: var(--shadow); overflow-x: auto; }
.chain .origin { font-size: .9em; color: var(--muted); margin-bottom: .3em; }
.chain .origin b { color: var(--ink); font-weight: 600; }
.kind { display: inline-block; font-size: .72em; text-transform: uppercase; letter-spacing: .05em; padding: 0 .45em; border-radius: 4px; background: var(--line); color: var(--ink); margin-right: .3em; }
ul.tree { list-style: none; margin: 0; padding-left: 1.1em; border-left: 2px solid var(--line); }
ul.tree.top { border-left: none; padding-left: 0; }
ul.tree li { position: relative; margin: .3em 0; }
ul.tree ul.tree li::before { content: ""; position: absolute; left: -1.1em; top: .85em; width: .85em; border-top: 2px solid var(--line); }
.node { display: inline-flex; flex-wrap: wrap; align-items: center; gap: .2em .5em; padding: .2em .55em; border-radius: 7px; border: 1px solid var(--line); border-left: 4px solid var(--st-color, var(--line)); background: var(--bg); max-width: 100%; }
.node.here { outline: 2px solid var(--accent); }
.node .to { font-weight: 600; }
.node .snip { color: var(--muted); font-size: .88em; overflow-wrap: anywhere; }
.node.missing { border-style: dashed; color: var(--muted); }

table.list { width: 100%; border-collapse: collapse; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; font-size: .9em; }
table.list th, table.list td { text-align: left; padding: .4em .6em; border-top: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
table.list th { color: var(--muted); font-weight: 500; border-top: none; white-space: nowrap; }
table.list td.nowrap { white-space: nowrap; overflow-wrap: normal; }

@media (max-width: 640px) {
  main { padding: .7em; }
  header.top { padding: .6em .7em; }
  nav.tabs { padding: 0 .2em; gap: 0; }
  nav.tabs a { padding: .65em .5em; }
  .viewer { margin-left: 0; }
  .agents { grid-template-columns: 1fr; }
  table.list thead { display: none; }
  table.list, table.list tbody, table.list tr, table.list td { display: block; width: 100%; }
  table.list tr { border-top: 1px solid var(--line); padding: .3em 0; }
  table.list td { border: none; padding: .1em .6em; }
  .filters .total { margin-left: 0; width: 100%; }
}
`;
