// The node's filesystem as the kubelet and a simulated runtime share it: the
// volume manager writes what it mounts (config map keys, secret keys,
// downward API fields) under `/var/lib/kubelet/pods/<uid>/volumes/…`, and the
// runtime bind-mounts those directories into containers, so a container sees
// exactly what the kubelet wrote. Kept in memory: a simulated node touches no
// disk.

/** An in-memory POSIX-style file tree: absolute paths, files and directories. */
export class NodeFilesystem {
  readonly #files = new Map<string, Uint8Array>();
  readonly #dirs = new Set<string>(["/"]);

  /** Writes `data` to `path`, creating its parent directories. */
  writeFile(path: string, data: Uint8Array | string): void {
    const normal = normalisePath(path);
    this.mkdir(parentOf(normal));
    this.#files.set(normal, typeof data === "string" ? new TextEncoder().encode(data) : data);
  }

  /** The file's bytes, or undefined if there is no such file. */
  readFile(path: string): Uint8Array | undefined {
    return this.#files.get(normalisePath(path));
  }

  /** Creates a directory and its parents (`mkdir -p`). */
  mkdir(path: string): void {
    let dir = normalisePath(path);
    while (!this.#dirs.has(dir)) {
      this.#dirs.add(dir);
      dir = parentOf(dir);
    }
  }

  isDirectory(path: string): boolean {
    return this.#dirs.has(normalisePath(path));
  }

  exists(path: string): boolean {
    const normal = normalisePath(path);
    return this.#files.has(normal) || this.#dirs.has(normal);
  }

  /** The names directly inside a directory, sorted; undefined if it is not one. */
  list(path: string): string[] | undefined {
    const dir = normalisePath(path);
    if (!this.#dirs.has(dir)) return undefined;
    const prefix = dir === "/" ? "/" : `${dir}/`;
    const names = new Set<string>();
    for (const entry of [...this.#files.keys(), ...this.#dirs]) {
      if (entry === dir || !entry.startsWith(prefix)) continue;
      const rest = entry.slice(prefix.length);
      names.add(rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : rest);
    }
    return [...names].sort();
  }

  /** Removes a file, or a directory with everything under it (`rm -rf`). */
  remove(path: string): void {
    const target = normalisePath(path);
    if (target === "/") return;
    const prefix = `${target}/`;
    this.#files.delete(target);
    this.#dirs.delete(target);
    for (const file of [...this.#files.keys()]) if (file.startsWith(prefix)) this.#files.delete(file);
    for (const dir of [...this.#dirs]) if (dir.startsWith(prefix)) this.#dirs.delete(dir);
  }

  /** Replaces a directory's contents with `files` (relative paths), as an atomic writer would. */
  replaceDirectory(path: string, files: ReadonlyMap<string, Uint8Array>): void {
    this.remove(path);
    this.mkdir(path);
    for (const [relative, data] of files) this.writeFile(`${normalisePath(path)}/${relative}`, data);
  }
}

/** `/a//b/./c/` → `/a/b/c`; `..` climbs, never above the root. */
export function normalisePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

function parentOf(path: string): string {
  const index = path.lastIndexOf("/");
  return index <= 0 ? "/" : path.slice(0, index);
}
