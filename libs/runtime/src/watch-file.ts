/**
 * Calls `onChange` after a file changes, once things have been quiet for `debounceMs`. Watches the
 * file's folder, not the file: editors and `mv` replace a file with a new one, and a watch on the
 * old one would go silent.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export function watchFile(path: string, debounceMs: number, onChange: () => void): () => void {
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  const watcher: FSWatcher = watch(dirname(path), { persistent: false }, (_event, file) => {
    if (file !== null && file.toString() !== name) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  watcher.on('error', () => {});
  return function stopWatching() {
    clearTimeout(timer);
    watcher.close();
  };
}
