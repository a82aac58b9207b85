#!/usr/bin/python3
"""A small CRI v1 client for tests/container/cri-runtime-class.sh: the
calls the kubelet makes for a pod of a RuntimeClass, over gRPC on a unix
socket, with stubs generated from cri-api.proto at test time
(python3 -m grpc_tools.protoc ... into STUBS).

  cri-client.py SOCK STUBS version SECONDS
      the runtime's name, version and CRI version, one line, as soon as the
      CRI answers, trying for at most SECONDS
  cri-client.py SOCK STUBS image-present IMAGE SECONDS
      exit 0 as soon as the CRI image service has IMAGE, 1 if it still has
      not after SECONDS
  cri-client.py SOCK STUBS pod-up NAME HANDLER IMAGE LOGDIR CGROUP_PARENT PODS -- COMMAND...
      as the kubelet starts a pod of one container: RunPodSandbox (host
      network; runtime_handler HANDLER, "" for the default), CreateContainer
      and StartContainer of COMMAND in IMAGE, then waits until the
      container's log (in LOGDIR) has the line "ready". Prints one JSON
      line: {"pod", "container", "pid"}. Each sandbox id is appended to
      the file PODS as soon as it exists, so that a cleanup finds it.
  cri-client.py SOCK STUBS exec CONTAINER -- COMMAND...
      ExecSync: COMMAND's stdout and stderr, and its exit status
  cri-client.py SOCK STUBS pod-down POD
      StopPodSandbox, then RemovePodSandbox

A call the runtime refuses prints "METHOD: CODE: DETAILS" (the gRPC status
as containerd gave it) on stderr and exits 2. Every call gives up after
CRI_SECONDS (default 60).
"""
import json
import os
import sys
import time


def die(msg, code=2):
    print(msg, file=sys.stderr)
    sys.exit(code)


def main(argv):
    if len(argv) < 4:
        die(__doc__)
    sock, stubs, cmd, args = argv[1], argv[2], argv[3], argv[4:]
    sys.path.insert(0, stubs)
    import grpc
    import cri_api_pb2 as api
    import cri_api_pb2_grpc as rpc

    seconds = float(os.environ.get("CRI_SECONDS", "60"))
    channel = grpc.insecure_channel("unix://" + sock)
    runtime = rpc.RuntimeServiceStub(channel)
    images = rpc.ImageServiceStub(channel)

    def call(method, request):
        name = type(request).__name__[:-len("Request")]
        try:
            return method(request, timeout=seconds)
        except grpc.RpcError as e:
            die("%s: %s: %s" % (name, e.code().name, e.details()))

    def split_command(rest):
        if "--" not in rest:
            die("test bug: no -- before the command")
        i = rest.index("--")
        return rest[:i], rest[i + 1:]

    # retry(SECONDS, fn): fn() until it returns something true or SECONDS
    # pass (a gRPC error counts as not yet); the last error, if any, is said.
    def retry(limit, fn):
        deadline, last = time.monotonic() + float(limit), None
        while True:
            try:
                r = fn()
                if r:
                    return r
            except grpc.RpcError as e:
                last = "%s: %s" % (e.code().name, e.details())
            if time.monotonic() >= deadline:
                if last:
                    print("after %s s: %s" % (limit, last), file=sys.stderr)
                return None
            time.sleep(0.1)

    if cmd == "version":
        v = retry(args[0], lambda: runtime.Version(api.VersionRequest(version="v1"), timeout=2))
        if not v:
            return 1
        print(v.runtime_name, v.runtime_version, v.runtime_api_version)
        return 0

    if cmd == "image-present":
        spec = api.ImageSpec(image=args[0])
        return 0 if retry(args[1], lambda: images.ImageStatus(api.ImageStatusRequest(image=spec), timeout=2).image.id) else 1

    if cmd == "pod-up":
        head, command = split_command(args)
        if len(head) != 6 or not command:
            die("usage: pod-up NAME HANDLER IMAGE LOGDIR CGROUP_PARENT PODS -- COMMAND...")
        name, handler, image, logdir, cgroup_parent, pods = head
        uid = "%s-%d" % (name, os.getpid())
        # As the kubelet writes it for a pod with hostNetwork: true.
        sandbox = api.PodSandboxConfig(
            metadata=api.PodSandboxMetadata(name=name, uid=uid, namespace="thpguard-ctest", attempt=0),
            # Empty: the pod shares the node's network and UTS namespaces (the proto: only then may it be).
            hostname="",
            log_directory=logdir,
            labels={"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": "thpguard-ctest",
                    "io.kubernetes.pod.uid": uid},
            linux=api.LinuxPodSandboxConfig(
                cgroup_parent=cgroup_parent,
                security_context=api.LinuxSandboxSecurityContext(
                    namespace_options=api.NamespaceOption(network=api.NODE, pid=api.CONTAINER, ipc=api.POD))))
        pod = call(runtime.RunPodSandbox, api.RunPodSandboxRequest(config=sandbox, runtime_handler=handler))
        with open(pods, "a") as f:
            f.write(pod.pod_sandbox_id + "\n")
        container = api.ContainerConfig(
            metadata=api.ContainerMetadata(name="toucher", attempt=0),
            image=api.ImageSpec(image=image),
            command=command[:1],
            args=command[1:],
            labels={"io.kubernetes.container.name": "toucher"},
            log_path="toucher/0.log")
        created = call(runtime.CreateContainer, api.CreateContainerRequest(
            pod_sandbox_id=pod.pod_sandbox_id, config=container, sandbox_config=sandbox))
        call(runtime.StartContainer, api.StartContainerRequest(container_id=created.container_id))
        # The log is the CRI's format: "TIME STREAM TAG TEXT" a line.
        log = os.path.join(logdir, "toucher/0.log")
        deadline = time.monotonic() + seconds
        lines = []
        while time.monotonic() < deadline:
            try:
                with open(log) as f:
                    lines = [l.rstrip("\n").split(" ", 3)[-1] for l in f]
            except FileNotFoundError:
                pass
            if "ready" in lines:
                break
            st = call(runtime.ContainerStatus, api.ContainerStatusRequest(container_id=created.container_id))
            if st.status.state == api.CONTAINER_EXITED:
                die("the container exited %d (%s %s) before it was ready; its log: %s"
                    % (st.status.exit_code, st.status.reason, st.status.message, lines))
            time.sleep(0.05)
        else:
            die("the container's log has no line 'ready' after %g s: %s" % (seconds, lines))
        st = call(runtime.ContainerStatus, api.ContainerStatusRequest(container_id=created.container_id, verbose=True))
        pid = json.loads(st.info.get("info", "{}")).get("pid")
        if not pid:
            die("ContainerStatus(verbose) gives no pid: %s" % dict(st.info))
        print(json.dumps({"pod": pod.pod_sandbox_id, "container": created.container_id, "pid": pid}))
        return 0

    if cmd == "exec":
        head, command = split_command(args)
        r = call(runtime.ExecSync, api.ExecSyncRequest(container_id=head[0], cmd=command, timeout=int(seconds)))
        sys.stdout.buffer.write(r.stdout)
        sys.stderr.buffer.write(r.stderr)
        return r.exit_code

    if cmd == "pod-down":
        call(runtime.StopPodSandbox, api.StopPodSandboxRequest(pod_sandbox_id=args[0]))
        call(runtime.RemovePodSandbox, api.RemovePodSandboxRequest(pod_sandbox_id=args[0]))
        return 0

    die("unknown command %r" % cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
