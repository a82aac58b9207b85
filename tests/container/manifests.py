#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Reads packaging/kubernetes with PyYAML (Debian: python3-yaml).

    manifests.py check SRCDIR   structural checks of the manifests; exit 1 with reasons
    manifests.py shell SRCDIR   the DaemonSet's container as bash assignments, so the
                                container test runs the image exactly as the DaemonSet does
    manifests.py rendered SRCDIR DIR
                                checks of `kubectl kustomize` output: DIR/base.yaml (the
                                base) and DIR/COMPONENT.yaml (the base plus one component)
                                for every directory in packaging/kubernetes/components
    manifests.py tojson FILE    the objects of a YAML stream as one JSON array

check asserts what the issue and the daemon need: only the host's THP
directory mounted writable below the --sysfs-root, the host's /proc read-only
at /host/proc, the ConfigMap mounted (whole, not subPath) at the --config
directory, the args (the image's ENTRYPOINT runs them: no command), the exec
probes (--verify for readiness, --alive for liveness, both on the same paths
as the daemon), RollingUpdate with maxUnavailable 10%, system-node-critical,
a toleration for every taint but Linux nodes only, no host namespaces, a
dedicated ServiceAccount with no token, a CPU request and no CPU limit,
app.kubernetes.io/version on every object equal to the project's version (and
the image tag), and the ConfigMap's policy byte-identical to conf/thpguard.conf.
"""
import json
import os
import re
import shlex
import sys

import yaml

K8S = "packaging/kubernetes"
THP_DIR = "/sys/kernel/mm/transparent_hugepage"
VERSION_LABEL = "app.kubernetes.io/version"


def project_version(srcdir):
    with open(os.path.join(srcdir, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"^project\(thpguard VERSION (\S+)", f.read(), re.M)
    if not m:
        raise SystemExit("FAIL: no `project(thpguard VERSION ...)` in CMakeLists.txt")
    return m.group(1)


def load_all(srcdir):
    docs = {}
    for name in ("namespace.yaml", "serviceaccount.yaml", "configmap.yaml", "daemonset.yaml",
                 "kustomization.yaml"):
        with open(os.path.join(srcdir, K8S, name), encoding="utf-8") as f:
            docs[name] = [d for d in yaml.safe_load_all(f) if d is not None]
    return docs


def one(docs, name, kind):
    found = [d for d in docs[name] if d.get("kind") == kind]
    if len(found) != 1:
        raise SystemExit(f"FAIL: {name} holds {len(found)} {kind} objects, expected 1")
    return found[0]


def arg_value(args, flag):
    """The value after flag in an argv list, or None."""
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a[len(flag) + 1:]
    return None


def mem_mib(q):
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    for u, f in units.items():
        if str(q).endswith(u):
            return float(str(q)[: -len(u)]) * f
    return float(q) / (1024 * 1024)


def cpu_milli(q):
    q = str(q)
    return float(q[:-1]) if q.endswith("m") else float(q) * 1000


def check(srcdir):
    docs = load_all(srcdir)
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    ns = one(docs, "namespace.yaml", "Namespace")
    namespace = ns["metadata"]["name"]
    expect(ns["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") == "privileged",
           "the Namespace does not let Pod Security Admission admit a privileged pod")

    cm = one(docs, "configmap.yaml", "ConfigMap")
    ds = one(docs, "daemonset.yaml", "DaemonSet")
    sa = one(docs, "serviceaccount.yaml", "ServiceAccount")
    kust = one(docs, "kustomization.yaml", "Kustomization")
    for obj in (cm, ds, sa):
        expect(obj["metadata"].get("namespace") == namespace,
               f"{obj['kind']} is not in namespace {namespace}")

    # app.kubernetes.io/version: the project's version, on every object and the pod template.
    version = project_version(srcdir)
    for name, objs in docs.items():
        for obj in objs:
            if obj.get("kind") == "Kustomization":
                continue
            got = obj["metadata"].get("labels", {}).get(VERSION_LABEL)
            expect(got == version, f"{name}: {obj['kind']} has {VERSION_LABEL} {got!r}, not {version!r} (CMakeLists.txt)")
    got = ds["spec"]["template"]["metadata"].get("labels", {}).get(VERSION_LABEL)
    expect(got == version, f"the pod template has {VERSION_LABEL} {got!r}, not {version!r}")
    expect(VERSION_LABEL not in ds["spec"]["selector"]["matchLabels"],
           f"{VERSION_LABEL} is in the selector, which cannot change on an upgrade")

    # The ConfigMap's policy is conf/thpguard.conf, byte for byte.
    with open(os.path.join(srcdir, "conf/thpguard.conf"), encoding="utf-8") as f:
        default_policy = f.read()
    expect(list(cm.get("data", {})) == ["thpguard.conf"], "the ConfigMap does not hold exactly thpguard.conf")
    expect(cm.get("data", {}).get("thpguard.conf") == default_policy,
           "the ConfigMap's thpguard.conf differs from conf/thpguard.conf")

    # kustomize: every manifest, and only files that exist.
    res = kust.get("resources", [])
    for name in ("namespace.yaml", "serviceaccount.yaml", "configmap.yaml", "daemonset.yaml"):
        expect(name in res, f"kustomization.yaml does not list {name}")
    for r in res:
        expect(os.path.exists(os.path.join(srcdir, K8S, r)), f"kustomization.yaml lists {r}, which does not exist")

    spec = ds["spec"]
    pod = spec["template"]["spec"]
    expect(spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items(),
           "the selector does not match the pod template's labels")
    expect(spec.get("updateStrategy", {}).get("type") == "RollingUpdate", "the update strategy is not RollingUpdate")
    ru = spec.get("updateStrategy", {}).get("rollingUpdate", {})
    expect(ru.get("maxUnavailable") == "10%", f"rollingUpdate.maxUnavailable is {ru.get('maxUnavailable')!r}, not 10%")
    expect(ru.get("maxSurge", 0) in (0, "0%"), "rollingUpdate.maxSurge is not 0: two enforcers on one node")
    expect(pod.get("priorityClassName") == "system-node-critical", "priorityClassName is not system-node-critical")
    expect(any(t.get("operator") == "Exists" and "key" not in t and "effect" not in t
               for t in pod.get("tolerations", [])), "no toleration matches every taint")
    expect(pod.get("nodeSelector", {}).get("kubernetes.io/os") == "linux",
           "no nodeSelector kubernetes.io/os: linux (tolerating every taint, the pod would land on Windows nodes)")
    # hostPID: writer attribution reads /proc/PID of the node's writers.
    expect(pod.get("hostPID") is True, "hostPID is not true: writer attribution would see no writer")
    for f in ("hostNetwork", "hostIPC"):
        expect(pod.get(f) is False, f"{f} is not false")
    expect(pod.get("serviceAccountName") == sa["metadata"]["name"],
           f"the pod does not run as the ServiceAccount {sa['metadata']['name']}")
    expect(sa.get("automountServiceAccountToken") is False, "the ServiceAccount mounts a token")
    expect(pod.get("automountServiceAccountToken") is False, "the pod mounts a ServiceAccount token")

    containers = pod["containers"]
    expect(len(containers) == 1, "the pod does not have exactly one container")
    c = containers[0]
    expect("command" not in c, "the container sets command: the image's ENTRYPOINT [\"thpguardd\"] runs the args")
    expect(re.fullmatch(r".*/thpguard:" + re.escape(version), c.get("image", "")) is not None,
           f"the image {c.get('image')!r} is not tagged {version}")
    argv = c.get("args", [])
    sysfs_root = arg_value(argv, "--sysfs-root")
    config = arg_value(argv, "--config")
    metrics = arg_value(argv, "--metrics-file")
    expect(sysfs_root == "/host/sys", "--sysfs-root is not /host/sys")
    expect(config == "/etc/thpguard/thpguard.conf", "--config is not /etc/thpguard/thpguard.conf")
    expect(metrics is not None, "no --metrics-file: the liveness probe needs it")
    expect(not any(a in argv for a in ("--audit", "--once", "--verify", "-n", "--check-config")),
           "the container's args are not the daemon's")

    sc = c.get("securityContext", {})
    expect(sc.get("privileged") is True, "the container is not privileged (see the comment in daemonset.yaml)")
    expect(sc.get("runAsUser", 0) == 0, "the container does not run as uid 0")
    expect(sc.get("readOnlyRootFilesystem") is True, "the root file system is writable")

    res = c.get("resources", {})
    expect("cpu" in res.get("requests", {}) and "memory" in res.get("requests", {}), "no cpu and memory requests")
    expect("memory" in res.get("limits", {}), "no memory limit")
    expect("cpu" not in res.get("limits", {}), "a CPU limit: CFS throttling would delay corrections")
    if "limits" in res and "memory" in res["limits"]:
        expect(mem_mib(res["limits"]["memory"]) <= 128, "the memory limit is not small")
    if "requests" in res and "cpu" in res["requests"]:
        expect(cpu_milli(res["requests"]["cpu"]) <= 50, "the cpu request is not small")

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}

    # The host's THP directory at the same path below the --sysfs-root, writable; nothing else of /sys.
    thp_mount = (sysfs_root or "") + THP_DIR[len("/sys"):]
    m = mounts.get(thp_mount)
    expect(m is not None, f"nothing is mounted at {thp_mount} (--sysfs-root {sysfs_root})")
    if m:
        v = volumes.get(m["name"], {})
        expect(v.get("hostPath", {}).get("path") == THP_DIR, f"{thp_mount} is not the host's {THP_DIR} (hostPath)")
        expect(not m.get("readOnly", False), f"{thp_mount} is mounted read-only: the daemon writes through it")
        expect("subPath" not in m, f"{thp_mount} is a subPath mount")
    for v in volumes.values():
        path = v.get("hostPath", {}).get("path", "")
        if path == "/sys" or (path.startswith("/sys/") and path != THP_DIR):
            expect(False, f"volume {v['name']} mounts the host's {path}: only {THP_DIR} is needed")
    # The host's /proc, read-only, for thpguardctl --proc-root /host/proc.
    m = mounts.get("/host/proc")
    expect(m is not None and volumes.get(m["name"], {}).get("hostPath", {}).get("path") == "/proc",
           "the host's /proc is not mounted at /host/proc (thpguardctl status --proc-root /host/proc)")
    if m:
        expect(m.get("readOnly") is True, "/host/proc is not mounted read-only")

    # The ConfigMap at the policy's directory, whole: the kubelet's ..data swap reaches it.
    m = mounts.get(os.path.dirname(config or ""))
    expect(m is not None, f"nothing is mounted at {os.path.dirname(config or '')}")
    if m:
        v = volumes.get(m["name"], {})
        expect(v.get("configMap", {}).get("name") == cm["metadata"]["name"],
               f"{os.path.dirname(config)} is not the ConfigMap {cm['metadata']['name']}")
        expect("subPath" not in m, "the ConfigMap is a subPath mount: the kubelet never updates those")
        mode = v.get("configMap", {}).get("defaultMode", 0o644)
        expect(mode & 0o022 == 0, "the policy file would be writable by group or others: thpguardd refuses it")

    # The metrics file's directory is a volume (emptyDir, or the node-exporter hostPath).
    m = mounts.get(os.path.dirname(metrics or ""))
    expect(m is not None, f"the metrics directory {os.path.dirname(metrics or '')} is not a volume")

    # Probes: exec, the daemon's own checks, on the same paths as the daemon.
    ready = c.get("readinessProbe", {}).get("exec", {}).get("command", [])
    live = c.get("livenessProbe", {}).get("exec", {}).get("command", [])
    expect(ready[:2] == ["/usr/sbin/thpguardd", "--verify"], "the readinessProbe is not `thpguardd --verify`")
    expect(arg_value(ready, "--sysfs-root") == sysfs_root and arg_value(ready, "--config") == config,
           "the readinessProbe does not check the daemon's sysfs root and policy")
    expect(live[:2] == ["/usr/sbin/thpguardd", "--alive"], "the livenessProbe is not `thpguardd --alive`")
    expect(arg_value(live, "--metrics-file") == metrics, "the livenessProbe does not read the daemon's metrics file")
    lp = c.get("livenessProbe", {})
    expect(lp.get("periodSeconds", 10) * lp.get("failureThreshold", 3) >= 60,
           "the livenessProbe gives up in under a minute: a recheck interval is 30 s")

    for p in problems:
        print(f"FAIL: {K8S}: {p}")
    if not problems:
        print(f"{K8S}: the Namespace, ConfigMap, DaemonSet and kustomization hold together")
    return 1 if problems else 0


def shell(srcdir):
    docs = load_all(srcdir)
    c = one(docs, "daemonset.yaml", "DaemonSet")["spec"]["template"]["spec"]["containers"][0]
    argv = c.get("args", [])
    out = {
        "DS_ARGS": argv,
        "DS_READY": c["readinessProbe"]["exec"]["command"],
        "DS_LIVE": c["livenessProbe"]["exec"]["command"],
    }
    for name, words in out.items():
        print(f"{name}=({' '.join(shlex.quote(w) for w in words)})")
    print(f"DS_SYSFS_ROOT={shlex.quote(arg_value(argv, '--sysfs-root'))}")
    print(f"DS_CONFIG={shlex.quote(arg_value(argv, '--config'))}")
    print(f"DS_METRICS={shlex.quote(arg_value(argv, '--metrics-file'))}")
    cm = one(docs, "configmap.yaml", "ConfigMap")
    print(f"DS_CONFIGMAP_KEY={shlex.quote(next(iter(cm['data'])))}")
    return 0


def load_stream(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def obj_key(obj):
    return (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def pod_volume_types(ds):
    types = set()
    for v in ds["spec"]["template"]["spec"].get("volumes", []):
        types |= set(v) - {"name"}
    return types


def rendered(srcdir, outdir):
    """`kubectl kustomize` of the base and of the base plus each component."""
    problems = []
    version = project_version(srcdir)

    def expect(cond, what):
        if not cond:
            problems.append(what)

    comp_root = os.path.join(srcdir, K8S, "components")
    comps = sorted(d for d in os.listdir(comp_root) if os.path.isdir(os.path.join(comp_root, d)))
    for want in ("node-exporter-textfile", "openshift", "audit-only", "runtime-classes", "nfd-features"):
        expect(want in comps, f"no component {want} in {K8S}/components")

    base = {obj_key(o): o for o in load_stream(os.path.join(outdir, "base.yaml"))}
    base_ds = next((o for o in base.values() if o["kind"] == "DaemonSet"), None)
    expect(base_ds is not None, "the base renders no DaemonSet")
    if base_ds is None:
        return report(problems, "")
    base_c = base_ds["spec"]["template"]["spec"]["containers"][0]

    for name in ["base"] + comps:
        objs = {obj_key(o): o for o in load_stream(os.path.join(outdir, f"{name}.yaml"))}
        for k, o in objs.items():
            labels = o["metadata"].get("labels", {})
            expect(labels.get(VERSION_LABEL) == version,
                   f"{name}: {k[0]} {k[2]} has {VERSION_LABEL} {labels.get(VERSION_LABEL)!r}, not {version!r}")
            expect(labels.get("app.kubernetes.io/part-of") == "thpguard",
                   f"{name}: {k[0]} {k[2]} has no app.kubernetes.io/part-of: thpguard")
        if name == "base":
            continue
        ds = objs.get(obj_key(base_ds))
        expect(ds is not None, f"{name}: no DaemonSet")
        if ds is None:
            continue
        c = ds["spec"]["template"]["spec"]["containers"][0]
        changed = {k for k in objs if k in base and objs[k] != base[k]}
        added = set(objs) - set(base)
        expect(not set(base) - set(objs), f"{name}: drops {sorted(set(base) - set(objs))}")

        if name == "node-exporter-textfile":
            vols = {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}
            mounts = {m["name"]: m for m in c["volumeMounts"]}
            metrics = arg_value(c["args"], "--metrics-file") or ""
            m = mounts.get("metrics", {})
            expect(m.get("mountPath") == os.path.dirname(metrics),
                   f"{name}: the metrics volume is not at the --metrics-file's directory")
            expect(vols.get("metrics") == {"name": "metrics", "hostPath": {
                "path": "/var/lib/node_exporter/textfile_collector", "type": "DirectoryOrCreate"}},
                f"{name}: the metrics volume is not exactly the hostPath /var/lib/node_exporter/textfile_collector: "
                f"{vols.get('metrics')}")
            expect(changed == {obj_key(base_ds)} and not added, f"{name}: changes more than the DaemonSet: {sorted(changed | added)}")
        elif name == "audit-only":
            expect(c["args"] == base_c["args"] + ["--audit"], f"{name}: the args are {c['args']}, not the base's plus --audit")
            expect(changed == {obj_key(base_ds)} and not added, f"{name}: changes more than the DaemonSet: {sorted(changed | added)}")
        elif name == "runtime-classes":
            expect(changed == set() and {k[0] for k in added} == {"RuntimeClass"},
                   f"{name}: changes more than adding RuntimeClasses: {sorted(changed | added)}")
            rcs = {o["metadata"]["name"]: o for o in objs.values() if o["kind"] == "RuntimeClass"}
            expect(sorted(rcs) == ["thp-advised-only", "thp-disable"], f"{name}: RuntimeClasses {sorted(rcs)}")
            for rc_name, rc in rcs.items():
                expect(rc.get("apiVersion") == "node.k8s.io/v1", f"{name}: {rc_name} is not node.k8s.io/v1")
                expect(rc.get("handler") == rc_name,
                       f"{name}: {rc_name}'s handler is {rc.get('handler')!r}, not the drop-ins' {rc_name!r}")
                expect("namespace" not in rc["metadata"], f"{name}: {rc_name} has a namespace (it is cluster-scoped)")
            # The handlers the RuntimeClasses name are those the packaged drop-ins declare.
            for dropin in ("packaging/runtime/containerd/thpguard-runtimes.v3.toml.in",
                           "packaging/runtime/crio/50-thpguard-runc.conf.in",
                           "packaging/runtime/crio/50-thpguard-crun.conf.in"):
                text = open(os.path.join(srcdir, dropin), encoding="utf-8").read()
                for rc_name in rcs:
                    expect(f"runtimes.{rc_name}]" in text, f"{name}: {dropin} declares no handler {rc_name}")
            # ... and those thpguard-containerd-config writes (thp-MODE for each of its MODES).
            cmd = "packaging/runtime/containerd/thpguard-containerd-config.in"
            m = re.search(r"^MODES=\(([^)]*)\)$", open(os.path.join(srcdir, cmd), encoding="utf-8").read(), re.M)
            written = sorted("thp-" + mode for mode in m.group(1).split()) if m else []
            expect(written == sorted(rcs), f"{name}: {cmd} writes the handlers {written}, not {sorted(rcs)}")
        elif name == "nfd-features":
            features = arg_value(c["args"], "--nfd-features-file") or ""
            vols = {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}
            mounts = {m["name"]: m for m in c["volumeMounts"]}
            fdir = "/etc/kubernetes/node-feature-discovery/features.d"
            expect(c["args"][:len(base_c["args"])] == base_c["args"] and features == fdir + "/thpguard",
                   f"{name}: the args are {c['args']}, not the base's plus --nfd-features-file {fdir}/thpguard")
            expect(mounts.get("nfd-features", {}).get("mountPath") == fdir and not mounts["nfd-features"].get("readOnly"),
                   f"{name}: {fdir} is not mounted writable where --nfd-features-file points")
            expect(vols.get("nfd-features") == {"name": "nfd-features", "hostPath": {"path": fdir, "type": "DirectoryOrCreate"}},
                   f"{name}: the nfd-features volume is not the host's {fdir}: {vols.get('nfd-features')}")
            expect(changed == {obj_key(base_ds)} and not added, f"{name}: changes more than the DaemonSet: {sorted(changed | added)}")
        elif name == "openshift":
            expect(ds == base_ds, f"{name}: changes the DaemonSet")
            sccs = [o for o in objs.values() if o["kind"] == "SecurityContextConstraints"]
            expect(len(sccs) == 1, f"{name}: {len(sccs)} SecurityContextConstraints, expected 1")
            if len(sccs) != 1:
                continue
            scc = sccs[0]
            pod = ds["spec"]["template"]["spec"]
            sc = c.get("securityContext", {})
            # The SCC admits the pod as it is.
            if sc.get("privileged"):
                expect(scc.get("allowPrivilegedContainer") is True, f"{name}: the SCC refuses a privileged container")
            if sc.get("allowPrivilegeEscalation", True) or sc.get("privileged"):
                expect(scc.get("allowPrivilegeEscalation") in (True, None),
                       f"{name}: the SCC refuses privilege escalation, which a privileged container implies")
            allowed = set(scc.get("volumes") or [])
            missing = pod_volume_types(ds) - allowed
            expect("*" in allowed or not missing, f"{name}: the SCC does not allow the pod's volume types {sorted(missing)}")
            if "hostPath" in pod_volume_types(ds):
                expect(scc.get("allowHostDirVolumePlugin") is True, f"{name}: the SCC refuses hostPath volumes")
            expect(scc.get("allowHostPID") is True, f"{name}: the SCC refuses hostPID, which writer attribution needs")
            for f, pf in (("allowHostNetwork", "hostNetwork"), ("allowHostIPC", "hostIPC")):
                expect(scc.get(f) is False, f"{name}: the SCC allows {pf}, which thpguard does not use")
                expect(pod.get(pf) is False, f"{name}: the pod asks for {pf}")
            expect(scc.get("allowHostPorts") is False, f"{name}: the SCC allows host ports")
            ru = scc.get("runAsUser", {})
            expect(ru.get("type") == "RunAsAny" or (ru.get("type") == "MustRunAs" and ru.get("uid") == 0),
                   f"{name}: the SCC does not let the pod run as uid 0")
            expect(not scc.get("users") and not scc.get("groups"),
                   f"{name}: the SCC names users or groups: only the ServiceAccount, through RBAC, may use it")
            # Bound to the ServiceAccount, and only to it.
            roles = [o for o in objs.values() if o["kind"] == "ClusterRole"]
            bindings = [o for o in objs.values() if o["kind"] == "RoleBinding"]
            ok = False
            for b in bindings:
                role = next((r for r in roles if r["metadata"]["name"] == b["roleRef"]["name"]), None)
                if b["roleRef"]["kind"] != "ClusterRole" or role is None:
                    continue
                uses = any("use" in r.get("verbs", []) and "securitycontextconstraints" in r.get("resources", [])
                           and "security.openshift.io" in r.get("apiGroups", [])
                           and r.get("resourceNames") == [scc["metadata"]["name"]] for r in role["rules"])
                subjects = b.get("subjects", [])
                if uses and subjects == [{"kind": "ServiceAccount", "name": pod["serviceAccountName"],
                                          "namespace": ds["metadata"]["namespace"]}]:
                    expect(b["metadata"].get("namespace") == ds["metadata"]["namespace"],
                           f"{name}: the RoleBinding is not in the DaemonSet's namespace")
                    ok = True
            expect(ok, f"{name}: no RoleBinding lets exactly the ServiceAccount {pod.get('serviceAccountName')} use "
                       f"the SCC {scc['metadata']['name']}")
            ns = next((o for o in objs.values() if o["kind"] == "Namespace"), {})
            expect(ns.get("metadata", {}).get("labels", {}).get("security.openshift.io/scc.podSecurityLabelSync") == "false",
                   f"{name}: OpenShift would rewrite the namespace's Pod Security labels")
    return report(problems, f"kustomize: the base and {len(comps)} components ({', '.join(comps)}) render as intended")


def report(problems, ok_msg):
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print(ok_msg)
    return 1 if problems else 0


def tojson(path):
    json.dump(load_stream(path), sys.stdout)
    return 0


def configmap_data(srcdir, key):
    docs = load_all(srcdir)
    sys.stdout.write(one(docs, "configmap.yaml", "ConfigMap")["data"][key])
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "shell", "configmap", "rendered", "tojson"):
        raise SystemExit(__doc__)
    if sys.argv[1] == "rendered":
        sys.exit(rendered(sys.argv[2], sys.argv[3]))
    if sys.argv[1] == "tojson":
        sys.exit(tojson(sys.argv[2]))
    if sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    if sys.argv[1] == "shell":
        sys.exit(shell(sys.argv[2]))
    sys.exit(configmap_data(sys.argv[2], sys.argv[3]))
