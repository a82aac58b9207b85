// SPDX-License-Identifier: MIT
//
//   node validate.mjs FILE.json...
//
// Each FILE holds a JSON array of Kubernetes objects (kubectl kustomize's
// output, turned into JSON by manifests.py tojson). Every object is validated
// against the JSON schema of its apiVersion and kind:
//  - core and built-in groups: the kubernetes-models package (generated from
//    the Kubernetes OpenAPI schema: types, formats, required fields, enums);
//  - monitoring.coreos.com/v1: @kubernetes-models/prometheus-operator
//    (generated from prometheus-operator's CRDs);
//  - security.openshift.io/v1 SecurityContextConstraints: no package has it,
//    so SCC_SCHEMA below, written from OpenShift's API reference (its required
//    fields, types and strategy values), checked with ajv; it also refuses
//    unknown fields.
// Prints one line per object; exits 1 if any is invalid or of a kind we
// cannot validate.
import { readFileSync } from "node:fs";
import Ajv from "ajv";

const stringsOrNull = { type: ["array", "null"], items: { type: "string" } };
const idRanges = {
  type: "array",
  items: {
    type: "object",
    additionalProperties: false,
    properties: { min: { type: "integer" }, max: { type: "integer" } },
  },
};
const VOLUME_TYPES = [
  "*", "none", "awsElasticBlockStore", "azureDisk", "azureFile", "cephFS", "cinder", "configMap", "csi",
  "downwardAPI", "emptyDir", "ephemeral", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo",
  "glusterfs", "hostPath", "image", "iscsi", "nfs", "persistentVolumeClaim", "photonPersistentDisk",
  "portworxVolume", "projected", "quobyte", "rbd", "scaleIO", "secret", "storageOS", "vsphere",
];
const SCC_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: [
    "apiVersion", "kind", "metadata",
    "allowHostDirVolumePlugin", "allowHostIPC", "allowHostNetwork", "allowHostPID", "allowHostPorts",
    "allowPrivilegedContainer", "allowedCapabilities", "defaultAddCapabilities", "priority",
    "readOnlyRootFilesystem", "requiredDropCapabilities", "volumes",
  ],
  properties: {
    apiVersion: { const: "security.openshift.io/v1" },
    kind: { const: "SecurityContextConstraints" },
    metadata: {
      type: "object",
      required: ["name"],
      properties: {
        name: { type: "string", pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" },
        labels: { type: "object", additionalProperties: { type: "string" } },
        annotations: { type: "object", additionalProperties: { type: "string" } },
      },
    },
    allowHostDirVolumePlugin: { type: "boolean" },
    allowHostIPC: { type: "boolean" },
    allowHostNetwork: { type: "boolean" },
    allowHostPID: { type: "boolean" },
    allowHostPorts: { type: "boolean" },
    allowPrivilegeEscalation: { type: ["boolean", "null"] },
    allowPrivilegedContainer: { type: "boolean" },
    allowedCapabilities: stringsOrNull,
    allowedFlexVolumes: {
      type: ["array", "null"],
      items: { type: "object", required: ["driver"], properties: { driver: { type: "string" } } },
    },
    allowedUnsafeSysctls: stringsOrNull,
    defaultAddCapabilities: stringsOrNull,
    defaultAllowPrivilegeEscalation: { type: ["boolean", "null"] },
    forbiddenSysctls: stringsOrNull,
    fsGroup: {
      type: ["object", "null"],
      additionalProperties: false,
      properties: { type: { enum: ["MustRunAs", "RunAsAny"] }, ranges: idRanges },
    },
    groups: stringsOrNull,
    priority: { type: ["integer", "null"] },
    readOnlyRootFilesystem: { type: "boolean" },
    requiredDropCapabilities: stringsOrNull,
    runAsUser: {
      type: ["object", "null"],
      additionalProperties: false,
      properties: {
        type: { enum: ["MustRunAs", "MustRunAsRange", "MustRunAsNonRoot", "RunAsAny"] },
        uid: { type: "integer" },
        uidRangeMin: { type: "integer" },
        uidRangeMax: { type: "integer" },
      },
    },
    seLinuxContext: {
      type: ["object", "null"],
      additionalProperties: false,
      properties: {
        type: { enum: ["MustRunAs", "RunAsAny"] },
        seLinuxOptions: {
          type: "object",
          additionalProperties: false,
          properties: {
            level: { type: "string" }, role: { type: "string" }, type: { type: "string" }, user: { type: "string" },
          },
        },
      },
    },
    seccompProfiles: stringsOrNull,
    supplementalGroups: {
      type: ["object", "null"],
      additionalProperties: false,
      properties: { type: { enum: ["MustRunAs", "RunAsAny"] }, ranges: idRanges },
    },
    users: stringsOrNull,
    volumes: { type: ["array", "null"], items: { enum: VOLUME_TYPES } },
  },
};

const ajv = new Ajv({ allErrors: true, strict: true });
const validateScc = ajv.compile(SCC_SCHEMA);

// The module that holds the model of apiVersion/kind.
function modelPath(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (group === "monitoring.coreos.com")
    return `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`;
  return `kubernetes-models/${group ? `${group}/` : ""}${version}/${kind}`;
}

async function validate(obj) {
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== "string" || typeof kind !== "string") return "no apiVersion or kind";
  if (apiVersion === "security.openshift.io/v1" && kind === "SecurityContextConstraints") {
    if (validateScc(obj)) return null;
    return ajv.errorsText(validateScc.errors, { dataVar: "scc" });
  }
  let mod;
  try {
    mod = await import(modelPath(apiVersion, kind));
  } catch (e) {
    return `no schema for ${apiVersion} ${kind} (${e.code || e.message})`;
  }
  const Model = mod[kind];
  if (!Model) return `no model ${kind} in ${modelPath(apiVersion, kind)}`;
  try {
    new Model(obj).validate();
    return null;
  } catch (e) {
    return e.message;
  }
}

let bad = 0, n = 0;
for (const file of process.argv.slice(2)) {
  const objs = JSON.parse(readFileSync(file, "utf8"));
  if (!Array.isArray(objs) || objs.length === 0) {
    console.log(`FAIL: ${file}: not a non-empty array of objects`);
    bad++;
    continue;
  }
  for (const obj of objs) {
    const what = `${obj.apiVersion} ${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata?.name}`;
    const err = await validate(obj);
    n++;
    if (err) {
      console.log(`FAIL: ${file}: ${what}: ${err}`);
      bad++;
    } else {
      console.log(`valid: ${what}`);
    }
  }
}
console.log(`${n - bad} of ${n} objects valid`);
process.exit(bad ? 1 : 0);
