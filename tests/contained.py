"""Run a command as a container of the shipped deployments runs it, as far as this machine allows.

    python tests/contained.py --cap-add SYS_ADMIN,NET_ADMIN -- dask worker ...   # a worker's
    python tests/contained.py --keep /tmp/x/venv -- arena run ...                 # Docker's defaults

Both run the command as root of a user namespace of its own (uids and gids 0-65535 mapped
to themselves, as a container without user-namespace remapping sees them), in a mount
namespace of its own with a private, empty ``/tmp`` (the deployments' ``tmpfs: [/tmp]`` and
in-memory ``emptyDir``) and its cgroups read-only (as Docker mounts them), and with the capability bounding set of a Docker container:
Docker's default capabilities plus those of ``--cap-add`` (what a file's ``cap_add`` or
``capabilities: {add: [...]}`` names). No seccomp filter and no AppArmor profile is added:
the worker's are ``unconfined`` in both files. A container that adds nothing -- the compose
coordinator, the Kubernetes Job -- keeps Docker's defaults, with which bubblewrap cannot
make its namespaces.

``--keep PATH`` (repeatable) shows a path of the machine's ``/tmp`` at its place in the
private one: the installed project where it lies under ``/tmp``, or a volume.

The parent writes the namespace's maps (it must: a process cannot map more than its own uid
into a namespace it made), then waits for the command and exits with its code. Needs root.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PR_CAPBSET_DROP = 24

#: Docker's default capabilities (moby's oci/caps/defaults.go), by number
DOCKER_DEFAULT = {
    0: "CHOWN", 1: "DAC_OVERRIDE", 3: "FOWNER", 4: "FSETID", 5: "KILL", 6: "SETGID", 7: "SETUID",
    8: "SETPCAP", 10: "NET_BIND_SERVICE", 13: "NET_RAW", 18: "SYS_CHROOT", 27: "MKNOD", 29: "AUDIT_WRITE",
    31: "SETFCAP",
}
#: the capabilities a file may add, by name
NUMBERS = {"NET_ADMIN": 12, "SYS_ADMIN": 21, "SYS_PTRACE": 19, "SYS_RESOURCE": 24, "IPC_LOCK": 14, **{
    v: k for k, v in DOCKER_DEFAULT.items()}}
MAPPED = 65536


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except OSError:
        return 40


def _mounts_under(top: str) -> list[str]:
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4].replace("\\040", " ") for line in f]
    return sorted({p for p in points if p == top or p.startswith(top + "/")})


def main(argv: list[str]) -> int:
    added: list[str] = []
    keep_paths: list[str] = []
    while argv[:1] in (["--cap-add"], ["--keep"]) and len(argv) > 1:
        if argv[0] == "--keep":
            keep_paths.append(os.path.realpath(argv[1]))
        else:
            added += [c.strip().upper().removeprefix("CAP_") for c in argv[1].split(",") if c.strip()]
        argv = argv[2:]
    if len(argv) < 2 or argv[0] != "--" or any(c not in NUMBERS for c in added):
        print(__doc__, file=sys.stderr)
        return 2
    keep = set(DOCKER_DEFAULT) | {NUMBERS[c] for c in added}
    command = argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(mapped_w)
            _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
            os.write(ready_w, b"1")
            if os.read(mapped_r, 1) != b"1":
                os._exit(111)
            os.setgroups([])
            os.setresgid(0, 0, 0)
            os.setresuid(0, 0, 0)
            _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
            kept = [(path, os.open(path, os.O_PATH)) for path in keep_paths if path.startswith("/tmp/")]
            _check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, b"mode=1777"), "mount tmpfs /tmp")
            for path, fd in kept:
                os.makedirs(path, exist_ok=True)
                _check(libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, MS_BIND | MS_REC, None),
                       f"bind {path}")
                os.close(fd)
            if os.path.isdir("/sys/fs/cgroup"):  # a container sees its cgroups read-only
                _check(libc.mount(b"/sys/fs/cgroup", b"/sys/fs/cgroup", None, MS_BIND | MS_REC, None),
                       "bind /sys/fs/cgroup")
                for point in _mounts_under("/sys/fs/cgroup"):  # each hierarchy of cgroup v1 too
                    _check(libc.mount(None, point.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None),
                           f"remount {point} read-only")
            for cap in range(_last_cap() + 1):
                if cap not in keep:
                    _check(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
            os.execvp(command[0], command)
        except BaseException as exc:  # noqa: BLE001 - reported, then the child ends
            print(f"contained: {exc}", file=sys.stderr, flush=True)
        os._exit(127)
    os.close(ready_w)
    os.close(mapped_r)
    if os.read(ready_r, 1) != b"1":
        os.waitpid(pid, 0)
        return 127
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write(f"0 0 {MAPPED}\n")
    os.write(mapped_w, b"1")

    def forward(sig, _frame):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
