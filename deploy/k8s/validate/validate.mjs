// validate.mjs -- checks the manifests `luaload k8s` writes (a JSON List on
// stdin or in the file named) against the Kubernetes API schemas, offline,
// with kubernetes-models; prints one line per object and exits 1 when one
// does not validate or is of a kind it has no schema for.
//   node deploy/k8s/validate/validate.mjs manifests.json
import { readFileSync } from "node:fs";
import { ConfigMap, PersistentVolumeClaim, Service } from "kubernetes-models/v1";
import { Job } from "kubernetes-models/batch/v1";

const models = {
  "v1/ConfigMap": ConfigMap,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "v1/Service": Service,
  "batch/v1/Job": Job,
};

const text = readFileSync(process.argv[2] ?? 0, "utf8");
const doc = JSON.parse(text);
const items = doc.kind === "List" ? doc.items : [doc];
let failed = 0;
for (const item of items) {
  const key = `${item.apiVersion}/${item.kind}`;
  const name = `${item.kind} ${item.metadata?.name}`;
  const Model = models[key];
  try {
    if (!Model) throw new Error(`no schema here for ${key}`);
    new Model(item).validate();
    console.log(`ok   - ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL - ${name}: ${e.message}`);
  }
}
console.log(`${items.length - failed} valid, ${failed} invalid`);
process.exit(failed || items.length === 0 ? 1 : 0);
