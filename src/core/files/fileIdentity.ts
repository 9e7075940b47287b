// Which file a path names now: the same file while its device, inode and birth time are (an inode
// number alone may come back once a file is removed). A lease's folder, the results journal and the
// marks beside a prompt file's claim all tell a replaced file by it. Pure: no vscode import.

export function fileIdentity(stat: { dev: number; ino: number; birthtimeMs: number }): string {
  return `${stat.dev}:${stat.ino}:${stat.birthtimeMs}`;
}
