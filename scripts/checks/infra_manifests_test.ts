import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import { TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Service } from "kubernetes-models/v1/Service";

// The operators' files (infra/): Kubernetes objects validated against their schemas (kubernetes-models,
// KEDA and Prometheus Operator models, generated from the APIs' OpenAPI schemas), and the rules that
// made them fail in production: a memory alert above the pod's limit, rules matching a label one side
// lacks, images that cannot write their data folder, `:latest`, a .env that leaks in.
const ROOT = join(import.meta.dir, "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

type Doc = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
};
const MODELS: Record<string, new (doc: any) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "v1/Service": Service,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
  "keda.sh/v1alpha1/TriggerAuthentication": TriggerAuthentication,
};

function docsOf(file: string): Doc[] {
  return read(file)
    .split(/^---$/m)
    .map((part) => Bun.YAML.parse(part) as Doc | null)
    .filter((d): d is Doc => d !== null && typeof d === "object");
}

const K8S = "infra/k8s";
const manifestFiles = readdirSync(join(ROOT, K8S)).filter(
  (f) => f.endsWith(".yaml") && f !== "kustomization.yaml",
);
const all = manifestFiles.flatMap((f) => docsOf(`${K8S}/${f}`).map((doc) => ({ file: f, doc })));
const deployments = all.filter((d) => d.doc.kind === "Deployment").map((d) => d.doc);
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Bytes of a Kubernetes quantity (Gi, Mi, G, M, plain). */
function bytesOf(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|K|M|G|T)?$/.exec(q);
  if (!m) throw new Error(`not a quantity: ${q}`);
  const unit =
    { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, K: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ""] ?? 1;
  return Number(m[1]) * unit;
}

/** A pinned image reference: a tag with a version (x.y…, or a dated release), never `latest`. */
function pinned(image: string): boolean {
  const tag = /:([^/:@]+)$/.exec(image)?.[1];
  return tag !== undefined && tag !== "latest" && (/^v?\d+\.\d+/.test(tag) || /^RELEASE\.\d{4}-/.test(tag));
}

describe("Kubernetes manifests (infra/k8s, a Kustomize base)", () => {
  test("every object validates against its schema; the validator does refuse a broken object", () => {
    expect(all.length).toBeGreaterThanOrEqual(12);
    for (const { file, doc } of all) {
      const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      expect(Model, `${file}: ${doc.apiVersion} ${doc.kind} has no schema here`).toBeDefined();
      try {
        new Model!(doc).validate();
      } catch (err) {
        throw new Error(`${file} ${doc.kind}/${doc.metadata.name}: ${String(err)}`);
      }
    }
    const broken = structuredClone(deployments[0]!);
    broken.spec.template.spec.containers = [{ image: "x", ports: [{ containerPort: "http" }] }];
    expect(() => new Deployment(broken as never).validate()).toThrow();
  });

  test("kustomization.yaml lists every manifest and pins the images the Deployments run", () => {
    const k = Bun.YAML.parse(read(`${K8S}/kustomization.yaml`)) as {
      kind: string;
      resources: string[];
      images: { name: string; newTag: string }[];
    };
    expect(k.kind).toBe("Kustomization");
    expect([...k.resources].sort()).toEqual([...manifestFiles].sort());
    for (const d of deployments)
      for (const c of d.spec.template.spec.containers) {
        expect(pinned(c.image), `${d.metadata.name}: ${c.image}`).toBe(true);
        const [name, tag] = [
          c.image.slice(0, c.image.lastIndexOf(":")),
          c.image.slice(c.image.lastIndexOf(":") + 1),
        ];
        expect(k.images.find((i) => i.name === name)?.newTag, name).toBe(tag);
      }
    for (const i of k.images) expect(pinned(`${i.name}:${i.newTag}`)).toBe(true);
  });

  test("each Deployment has a writable data volume at DATA_DIR and runs as the image's user", () => {
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext, d.metadata.name).toMatchObject({ runAsNonRoot: true, fsGroup: 1000 });
      for (const c of pod.containers) {
        const dataDir = c.env.find((e: { name: string }) => e.name === "DATA_DIR")?.value;
        expect(dataDir, d.metadata.name).toBe("/app/.data");
        const mount = c.volumeMounts?.find((m: { mountPath: string }) => m.mountPath === dataDir);
        expect(mount, d.metadata.name).toBeDefined();
        expect(mount.readOnly ?? false).toBe(false);
        const volume = pod.volumes.find((v: { name: string }) => v.name === mount.name);
        expect(volume.emptyDir ?? volume.persistentVolumeClaim, d.metadata.name).toBeDefined();
      }
    }
  });

  test("PodDisruptionBudgets, NetworkPolicies and ServiceMonitors cover the apps", () => {
    const kinds = (kind: string) => all.filter((d) => d.doc.kind === kind).map((d) => d.doc);
    const podLabels = (name: string) =>
      deployments.find((d) => d.metadata.name === name)!.spec.template.metadata.labels;
    for (const name of ["site-api", "render-daemon-gpu"])
      expect(
        kinds("PodDisruptionBudget").some((p) => matches(p.spec.selector.matchLabels, podLabels(name))),
        name,
      ).toBe(true);
    for (const d of deployments)
      expect(
        kinds("NetworkPolicy").some((p) =>
          matches(p.spec.podSelector.matchLabels, d.spec.template.metadata.labels),
        ),
        d.metadata.name,
      ).toBe(true);
    // Each ServiceMonitor finds a Service with the port it scrapes, and that Service finds pods exposing it.
    const services = kinds("Service");
    for (const app of ["site-api", "render-daemon"]) {
      const monitor = kinds("ServiceMonitor").find((m) => m.spec.selector.matchLabels.app === app)!;
      expect(monitor, app).toBeDefined();
      expect(monitor.spec.targetLabels).toContain("app");
      const port = monitor.spec.endpoints[0].port;
      const service = services.find(
        (s) =>
          matches(monitor.spec.selector.matchLabels, s.metadata.labels ?? {}) &&
          s.spec.ports.some((p: { name: string }) => p.name === port),
      );
      expect(service, `${app}: a Service with port ${port}`).toBeDefined();
      const pods = deployments.filter((d) =>
        matches(service!.spec.selector, d.spec.template.metadata.labels),
      );
      expect(pods.length).toBeGreaterThan(0);
      for (const d of pods)
        expect(
          d.spec.template.spec.containers.some((c: any) =>
            c.ports?.some((p: { name: string }) => p.name === port),
          ),
        ).toBe(true);
    }
  });
});

describe("Prometheus, alert rules and Alertmanager (infra/prometheus, infra/alertmanager)", () => {
  const rules = Bun.YAML.parse(read("infra/prometheus/render-alerts.yaml")) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const exprs = rules.groups.flatMap((g) => g.rules);
  const prometheus = Bun.YAML.parse(read("infra/prometheus/prometheus.yml")) as any;

  test("the memory alert can fire: its threshold is below the render pod's memory limit", () => {
    const rule = exprs.find((r) => r.alert === "RenderDaemonMemoryHigh")!;
    const m = /process_resident_memory_bytes\{[^}]*\}\s*>\s*([\d\s*]+)$/.exec(rule.expr.trim())!;
    const threshold = m[1]!.split("*").reduce((n, f) => n * Number(f.trim()), 1);
    const limits = deployments
      .filter((d) => d.spec.template.metadata.labels.app === "render-daemon")
      .map((d) => bytesOf(d.spec.template.spec.containers[0].resources.limits.memory));
    expect(limits.length).toBeGreaterThan(0);
    for (const limit of limits) {
      expect(threshold).toBeLessThan(limit);
      expect(threshold).toBeGreaterThan(limit * 0.6);
    }
  });

  test("rules match only labels both compose's scrape config and the ServiceMonitors set", () => {
    // Compose: static labels per target; Kubernetes: the Services' labels named in targetLabels.
    const composeLabels = new Set<string>(
      prometheus.scrape_configs.flatMap((s: any) =>
        s.static_configs.flatMap((c: any) => Object.keys(c.labels ?? {})),
      ),
    );
    const k8sLabels = new Set<string>(
      all.filter((d) => d.doc.kind === "ServiceMonitor").flatMap((d) => d.doc.spec.targetLabels as string[]),
    );
    // Labels every exporter sets on its own series (outcome, stage, le…) are the same on both sides.
    const ownLabels = new Set(["outcome", "stage", "le", "instance"]);
    for (const r of exprs)
      for (const [, label] of r.expr.matchAll(/([a-z_]+)\s*(?:=~|!=|!~|=)\s*"/g)) {
        if (ownLabels.has(label!)) continue;
        expect([r.alert, label, composeLabels.has(label!)]).toEqual([r.alert, label, true]);
        expect([r.alert, label, k8sLabels.has(label!)]).toEqual([r.alert, label, true]);
      }
    for (const r of exprs) expect(r.expr).not.toMatch(/\bjob\s*=/);
  });

  test("Prometheus sends alerts to the Alertmanager compose runs, whose routes name defined receivers", () => {
    const target = prometheus.alerting.alertmanagers[0].static_configs[0].targets[0] as string;
    const compose = Bun.YAML.parse(read("infra/compose.yaml")) as { services: Record<string, any> };
    const [host, port] = target.split(":");
    const am = compose.services[host!];
    expect(am, `compose service ${host}`).toBeDefined();
    expect(am.image).toStartWith("prom/alertmanager:");
    expect(port).toBe("9093");
    const mounted = (am.volumes as string[]).find((v) => v.includes("alertmanager.yml"))!;
    expect(mounted.split(":")[0]).toBe("./alertmanager/alertmanager.yml");
    expect(am.command.join(" ")).toContain("--config.file=/etc/alertmanager/alertmanager.yml");

    const config = Bun.YAML.parse(read("infra/alertmanager/alertmanager.yml")) as any;
    const receivers = new Set((config.receivers as { name: string }[]).map((r) => r.name));
    const walk = (route: any): void => {
      expect(receivers.has(route.receiver ?? config.route.receiver)).toBe(true);
      for (const m of route.matchers ?? []) expect(m).toMatch(/^[a-z_]+(=|!=|=~|!~)"[^"]*"$/);
      for (const child of route.routes ?? []) walk(child);
    };
    expect(config.route.receiver).toBeDefined();
    walk(config.route);
    for (const r of config.receivers)
      expect(r.webhook_configs?.[0]?.url ?? r.email_configs ?? r.slack_configs).toBeTruthy();
    // Both the API and the daemons are scraped.
    expect(prometheus.scrape_configs.map((s: any) => s.static_configs[0].labels.app).sort()).toEqual([
      "render-daemon",
      "site-api",
    ]);
  });
});

describe("images and local settings", () => {
  test("compose and the Dockerfiles pin their images; no :latest anywhere in infra", () => {
    const compose = Bun.YAML.parse(read("infra/compose.yaml")) as {
      services: Record<string, { image?: string }>;
    };
    for (const [name, s] of Object.entries(compose.services))
      if (s.image) expect([name, s.image, pinned(s.image)]).toEqual([name, s.image, true]);
    for (const f of readdirSync(join(ROOT, "infra/docker")))
      for (const [, image] of read(`infra/docker/${f}`).matchAll(/^FROM\s+(\S+)/gm))
        expect([f, image, pinned(image!)]).toEqual([f, image, true]);
  });

  test("each image's DATA_DIR exists, is owned by the runtime user and is the one the app uses", () => {
    for (const f of readdirSync(join(ROOT, "infra/docker"))) {
      const text = read(`infra/docker/${f}`).replace(/\\\n/g, " ");
      const final = text.slice(text.lastIndexOf("\nFROM "));
      const env = final
        .split("\n")
        .filter((l) => l.startsWith("ENV "))
        .join(" ");
      expect([f, /\bDATA_DIR=\/app\/\.data\b/.test(env)]).toEqual([f, true]);
      const chown = final.search(/RUN mkdir -p \/app\/\.data && chown bun:bun \/app\/\.data/);
      const user = final.search(/^USER bun$/m);
      expect([f, chown > 0, chown < user]).toEqual([f, true, true]);
    }
  });

  test(".env is ignored by git and docker, and Bun does not load it at run time", async () => {
    const gitignore = read(".gitignore").split("\n");
    const dockerignore = read(".dockerignore").split("\n");
    for (const lines of [gitignore, dockerignore]) expect(lines).toContain(".env");
    expect(gitignore).toContain("!.env.example");
    for (const file of [".env", ".env.local", ".env.production"])
      expect([file, Bun.spawnSync(["git", "check-ignore", "-q", file], { cwd: ROOT }).exitCode]).toEqual([
        file,
        0,
      ]);
    expect(Bun.spawnSync(["git", "check-ignore", "-q", ".env.example"], { cwd: ROOT }).exitCode).toBe(1);

    // The repository's bunfig.toml in a folder with a .env: the process does not see its values.
    const dir = mkdtempSync(join(tmpdir(), "bunfig-env-"));
    try {
      copyFileSync(join(ROOT, "bunfig.toml"), join(dir, "bunfig.toml"));
      writeFileSync(join(dir, ".env"), "PORT=4999\nSITE_DOTENV_PROBE=loaded\n");
      writeFileSync(join(dir, "probe.ts"), "console.log(process.env.SITE_DOTENV_PROBE ?? 'absent')");
      const env = { ...process.env };
      delete env.SITE_DOTENV_PROBE;
      const run = Bun.spawnSync(["bun", "probe.ts"], { cwd: dir, env });
      expect(run.stdout.toString().trim()).toBe("absent");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
