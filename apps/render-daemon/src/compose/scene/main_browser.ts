// Runs inside the compositor page (Chromium): the warm three.js scene that frames captures.

import type { StyleBackground, StyleLook } from "@site/domain/screenshots";
import * as THREE from "three";
import { RoomEnvironment } from "three/addons/environments/RoomEnvironment.js";
import { buildDevice, type Device } from "./devices_browser.ts";
import { drawStatusBar } from "./status_bar.ts";

/** A rendered frame as a data URL (or raw RGBA rows, top first, base64), with where the time went (ms). */
export type ComposeResult = {
  dataUrl: string;
  /** With `raw`: the frame's RGBA pixels, top row first, base64. */
  rgba?: string;
  width: number;
  height: number;
  timings: { stage: number; draw: number; encode: number };
};

/**
 * A plate: the frame with the screen dark (RGB) and the screen's coverage (A, 0..255: how much of each
 * pixel the screen's content shows through, after anything drawn over it), base64, top row first; plus
 * where the screen's corners land (top-left, top-right, bottom-right, bottom-left, frame pixels).
 */
export type PlateResult = {
  rgba: string;
  width: number;
  height: number;
  corners: [number, number][];
  timings: { stage: number; draw: number; pack: number };
};

/** One compose request, sent by the daemon with page.evaluate. */
export type ComposeJob = {
  captureUrl: string;
  chromeUrl: string | null;
  /** The chrome bar's height in the capture's device pixels (0 without chrome). */
  chromeHeight: number;
  width: number;
  height: number;
  /** The screen's height over its width (the browser window takes the content's; see screens.ts). */
  aspect: number;
  look: StyleLook;
  theme: "light" | "dark";
  framing: number;
  mime: "image/webp" | "image/png";
  quality: number;
  /** Answer raw RGBA pixels instead of an encoded image (the reference path of tests and benches). */
  raw?: boolean;
  /**
   * A clip's pose at one instant (degrees): the device turned about its vertical axis (`yaw`) and the
   * camera moved around it (`azimuth`, `elevation`), after the look is framed, so that every angle of a
   * clip keeps the same camera distance (decision 1221).
   */
  motion?: { yaw: number; azimuth: number; elevation: number };
};

// MSAA: plates are drawn once per look, so anti-aliased edges cost nothing per render.
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true, alpha: false });
renderer.setPixelRatio(1);
renderer.outputColorSpace = THREE.SRGBColorSpace;
renderer.toneMapping = THREE.NeutralToneMapping;
renderer.shadowMap.enabled = true;
renderer.shadowMap.autoUpdate = false;
renderer.shadowMap.type = THREE.VSMShadowMap;
renderer.autoClear = false;
document.body.appendChild(renderer.domElement);

const scene = new THREE.Scene();
const pmrem = new THREE.PMREMGenerator(renderer);
scene.environment = pmrem.fromScene(new RoomEnvironment(), 0.04).texture;
const hemi = new THREE.HemisphereLight(0xffffff, 0x8890a0, 0.6);
const key = new THREE.DirectionalLight(0xffffff, 2);
key.castShadow = true;
key.shadow.mapSize.set(512, 512);
key.shadow.bias = -0.0005;
key.shadow.blurSamples = 12;
scene.add(hemi, key, key.target);
const catcherMat = new THREE.ShadowMaterial({ opacity: 0.3 });
// fade the catcher towards its rim so no edge or shadow-map border ever shows
catcherMat.onBeforeCompile = (shader) => {
  shader.vertexShader = shader.vertexShader.replace(
    "void main() {",
    "varying vec2 vLocal;\nvoid main() {\n  vLocal = position.xy;",
  );
  shader.fragmentShader = shader.fragmentShader
    .replace("void main() {", "varying vec2 vLocal;\nvoid main() {")
    .replace(
      "#include <tonemapping_fragment>",
      "gl_FragColor.a *= 1.0 - smoothstep(80.0, 195.0, length(vLocal));\n#include <tonemapping_fragment>",
    );
};
const catcher = new THREE.Mesh(new THREE.PlaneGeometry(400, 400), catcherMat);
catcher.receiveShadow = true;
scene.add(catcher);
// A contact shadow: a soft dark footprint right under a device that stands on the floor (the key light's
// shadow falls away from it, and on a dark backdrop nothing else would say the device touches the floor).
const contact = (() => {
  const c = document.createElement("canvas");
  c.width = 256;
  c.height = 256;
  const g = c.getContext("2d") as CanvasRenderingContext2D;
  g.filter = "blur(14px)";
  g.fillStyle = "#000";
  g.beginPath();
  g.roundRect(40, 40, 176, 176, 24);
  g.fill();
  const tex = new THREE.CanvasTexture(c);
  const mesh = new THREE.Mesh(
    new THREE.PlaneGeometry(1, 1),
    new THREE.MeshBasicMaterial({
      map: tex,
      color: 0x000000,
      transparent: true,
      depthWrite: false,
      toneMapped: false,
    }),
  );
  mesh.rotation.x = -Math.PI / 2;
  mesh.renderOrder = -1;
  return mesh;
})();
scene.add(contact);
const camera = new THREE.PerspectiveCamera(28, 16 / 10, 0.05, 500);

const bgScene = new THREE.Scene();
const bgCamera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0, 1);
const bgQuad = new THREE.Mesh(
  new THREE.PlaneGeometry(2, 2),
  new THREE.MeshBasicMaterial({ toneMapped: false }),
);
bgScene.add(bgQuad);

const devices = new Map<string, Device>();
const images = new Map<string, Promise<ImageBitmap>>();
const screens = new Map<string, THREE.CanvasTexture>();
const backgrounds = new Map<string, THREE.CanvasTexture>();
let shown: Device | null = null;
let lastShadowKey = "";

function remember<V>(map: Map<string, V>, k: string, v: V, max: number, drop?: (v: V) => void): V {
  map.set(k, v);
  while (map.size > max) {
    const first = map.keys().next().value as string;
    const old = map.get(first) as V;
    map.delete(first);
    drop?.(old);
  }
  return v;
}

function loadBitmap(url: string): Promise<ImageBitmap> {
  const hit = images.get(url);
  if (hit) {
    // most recently used last, so a bitmap in use is never the one evicted
    images.delete(url);
    images.set(url, hit);
    return hit;
  }
  const p = fetch(url)
    .then((r) => {
      if (!r.ok) throw new Error(`compositor could not load ${url}: ${r.status}`);
      return r.blob();
    })
    .then((b) => createImageBitmap(b));
  p.catch(() => images.delete(url));
  return remember(images, url, p, 4, (old) => {
    old.then((b) => b.close()).catch(() => {});
  });
}

/** One pixel of a bitmap as [r, g, b]. */
function probe(img: ImageBitmap, x: number, y: number): [number, number, number] {
  const c = document.createElement("canvas");
  c.width = 1;
  c.height = 1;
  const g = c.getContext("2d") as CanvasRenderingContext2D;
  g.drawImage(img, x, y, 1, 1, 0, 0, 1, 1);
  const d = g.getImageData(0, 0, 1, 1).data;
  return [d[0], d[1], d[2]];
}

/** Paints chrome bar + page into a canvas with the screen's aspect: width fits, top aligned, rest filled. */
async function screenTexture(
  job: ComposeJob,
  aspect: number,
  key: string,
  targetWidth: number,
): Promise<THREE.CanvasTexture> {
  const hit = screens.get(key);
  if (hit) return hit;
  const page = await loadBitmap(job.captureUrl);
  const bar = job.chromeUrl ? await loadBitmap(job.chromeUrl) : null;
  const srcW = page.width;
  const texW = Math.min(srcW, 4096);
  const texH = Math.max(1, Math.round(texW * aspect));
  // drawn at the size the screen shows (area-filtered once), as the daemon's warp does (warp.ts)
  const tw = Math.max(1, Math.min(texW, Math.ceil(targetWidth)));
  const th = Math.max(1, Math.round((tw * texH) / texW));
  const k = tw / texW;
  const s = texW / srcW;
  const canvas = document.createElement("canvas");
  canvas.width = tw;
  canvas.height = th;
  const g = canvas.getContext("2d") as CanvasRenderingContext2D;
  g.imageSmoothingEnabled = true;
  g.imageSmoothingQuality = "high";
  // fill colour: the page's bottom-left pixel, so a short page seems to continue
  const [r, gr, b] = probe(page, 0, page.height - 1);
  g.fillStyle = `rgb(${r},${gr},${b})`;
  g.fillRect(0, 0, tw, th);
  let y = 0;
  if (job.look.device === "phone") {
    g.save();
    g.scale(k, k);
    y = drawStatusBar(g, texW, { rgb: probe(page, Math.min(2, srcW - 1), Math.min(2, page.height - 1)) }) * k;
    g.restore();
  }
  if (bar) {
    const bh = job.chromeHeight * s * k;
    g.drawImage(bar, 0, y, tw, bh);
    y += bh;
  }
  const visible = Math.min(page.height, Math.ceil((th - y) / (s * k)));
  if (visible > 0) g.drawImage(page, 0, 0, srcW, visible, 0, y, tw, visible * s * k);
  const tex = new THREE.CanvasTexture(canvas);
  tex.colorSpace = THREE.SRGBColorSpace;
  tex.anisotropy = 4;
  tex.generateMipmaps = true;
  tex.minFilter = THREE.LinearMipmapLinearFilter;
  return remember(screens, key, tex, 4, (t) => t.dispose());
}

function backgroundTexture(bg: StyleBackground, w: number, h: number): THREE.CanvasTexture {
  const k = `${JSON.stringify(bg)}|${w}x${h}`;
  const hit = backgrounds.get(k);
  if (hit) return hit;
  const scale = w > 1600 ? 0.5 : 1;
  const cw = Math.round(w * scale);
  const ch = Math.round(h * scale);
  const canvas = document.createElement("canvas");
  canvas.width = cw;
  canvas.height = ch;
  const g = canvas.getContext("2d") as CanvasRenderingContext2D;
  const a = (bg.angle * Math.PI) / 180;
  const dx = Math.sin(a) * 0.5;
  const dy = Math.cos(a) * 0.5;
  const lin = g.createLinearGradient(cw * (0.5 - dx), ch * (0.5 - dy), cw * (0.5 + dx), ch * (0.5 + dy));
  lin.addColorStop(0, bg.from);
  lin.addColorStop(1, bg.to);
  g.fillStyle = lin;
  g.fillRect(0, 0, cw, ch);
  const d = Math.hypot(cw, ch);
  for (const glow of bg.glows) {
    const rad = g.createRadialGradient(glow.x * cw, glow.y * ch, 0, glow.x * cw, glow.y * ch, glow.r * d);
    const c = new THREE.Color(glow.color);
    const rgb = `${Math.round(c.r * 255)},${Math.round(c.g * 255)},${Math.round(c.b * 255)}`;
    rad.addColorStop(0, `rgba(${rgb},${glow.alpha})`);
    rad.addColorStop(1, `rgba(${rgb},0)`);
    g.fillStyle = rad;
    g.fillRect(0, 0, cw, ch);
  }
  // a dark backdrop gets a soft pool of light behind the device, so its shadow has something to darken
  const lum = (hex: string) => {
    const c = new THREE.Color(hex);
    return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
  };
  if ((lum(bg.from) + lum(bg.to)) / 2 < 0.08) {
    const pool = g.createRadialGradient(cw * 0.5, ch * 0.6, 0, cw * 0.5, ch * 0.6, d * 0.42);
    pool.addColorStop(0, "rgba(255,255,255,0.10)");
    pool.addColorStop(1, "rgba(255,255,255,0)");
    g.fillStyle = pool;
    g.fillRect(0, 0, cw, ch);
  }
  // a little grain so gradients do not band once encoded
  const img = g.getImageData(0, 0, cw, ch);
  const px = img.data;
  for (let i = 0; i < px.length; i += 4) {
    const n = (Math.random() - 0.5) * 5;
    px[i] += n;
    px[i + 1] += n;
    px[i + 2] += n;
  }
  g.putImageData(img, 0, 0);
  const tex = new THREE.CanvasTexture(canvas);
  tex.colorSpace = THREE.SRGBColorSpace;
  return remember(backgrounds, k, tex, 8, (t) => t.dispose());
}

function deviceFor(look: StyleLook): Device {
  const k = `${look.device}|${look.finish}`;
  let d = devices.get(k);
  if (!d) {
    d = buildDevice(look.device, look.finish);
    devices.set(k, d);
  }
  return d;
}

const rad = (deg: number) => (deg * Math.PI) / 180;

/** World positions of the device's surfaces (a sample of each mesh's vertices): what framing must show. */
function surfacePoints(group: THREE.Object3D): THREE.Vector3[] {
  const pts: THREE.Vector3[] = [];
  group.updateMatrixWorld(true);
  group.traverse((o) => {
    const mesh = o as THREE.Mesh;
    if (!mesh.isMesh || (o as THREE.InstancedMesh).isInstancedMesh || !o.visible) return;
    const pos = mesh.geometry.getAttribute("position") as THREE.BufferAttribute | undefined;
    if (!pos) return;
    const step = Math.max(1, Math.ceil(pos.count / 1500));
    for (let i = 0; i < pos.count; i += step)
      pts.push(new THREE.Vector3().fromBufferAttribute(pos, i).applyMatrix4(mesh.matrixWorld));
  });
  return pts;
}

/** The projected extent (NDC) of points from a camera at `dist` along `dir` from `center`. */
function extent(pts: THREE.Vector3[], center: THREE.Vector3, dir: THREE.Vector3, dist: number) {
  camera.clearViewOffset();
  camera.position.copy(center).addScaledVector(dir, dist);
  camera.lookAt(center);
  camera.updateMatrixWorld();
  camera.updateProjectionMatrix();
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  let behind = false;
  const p = new THREE.Vector3();
  for (const v of pts) {
    p.copy(v).project(camera);
    if (p.z >= 1) behind = true;
    minX = Math.min(minX, p.x);
    maxX = Math.max(maxX, p.x);
    minY = Math.min(minY, p.y);
    maxY = Math.max(maxY, p.y);
  }
  return { minX, maxX, minY, maxY, behind };
}

/**
 * Frames the device tightly: the distance at which its projected surfaces span the view less `margin`
 * on each side (their own extent, not their bounding box's corners, which a turned device overstates),
 * times `framing`; then the view is shifted so that the device sits in the middle of the frame.
 */
function frameDevice(
  group: THREE.Object3D,
  center: THREE.Vector3,
  dir: THREE.Vector3,
  margin: number,
  framing: number,
  lift: number,
  w: number,
  h: number,
): number {
  const pts = surfacePoints(group);
  const limit = 1 - margin * 2;
  const fits = (dist: number) => {
    const e = extent(pts, center, dir, dist);
    return !e.behind && (e.maxX - e.minX) / 2 <= limit && (e.maxY - e.minY) / 2 <= limit;
  };
  let lo = 0.1;
  let hi = 1;
  while (!fits(hi) && hi < 1e4) hi *= 2;
  for (let i = 0; i < 24; i++) {
    const mid = (lo + hi) / 2;
    if (fits(mid)) hi = mid;
    else lo = mid;
  }
  const dist = hi * framing;
  const e = extent(pts, center, dir, dist);
  const cx = (e.minX + e.maxX) / 2;
  const cy = (e.minY + e.maxY) / 2 - lift * (e.maxY - e.minY);
  camera.setViewOffset(w, h, (cx * w) / 2, (-cy * h) / 2, w, h);
  camera.updateProjectionMatrix();
  return dist;
}

/** Shows the look's device with the screen's aspect; the screen's material is the caller's to set. */
function stageDevice(job: ComposeJob): Device {
  const device = deviceFor(job.look);
  if (shown !== device) {
    if (shown) scene.remove(shown.group);
    scene.add(device.group);
    shown = device;
  }
  device.fitAspect?.(job.aspect);
  return device;
}

/** Stages the look, renders one frame (the full 3D reference) and returns it encoded or raw. */
async function render(job: ComposeJob): Promise<ComposeResult> {
  const t0 = performance.now();
  const device = stageDevice(job);
  stageScene(job, device);
  const quad = screenCorners(device, job);
  const d = (a: [number, number], b: [number, number]) => Math.hypot(a[0] - b[0], a[1] - b[1]);
  const target = Math.max(d(quad[0], quad[1]), d(quad[3], quad[2]));
  const texKey = `${job.captureUrl}|${job.chromeUrl}|${job.aspect.toFixed(4)}|${Math.ceil(target)}`;
  const tex = await screenTexture(job, job.aspect, texKey, target);
  const screenMat = device.screen.material;
  screenMat.color.setRGB(1, 1, 1);
  if (screenMat.map !== tex) {
    // a program change only when the map appears; swapping one map for another needs no recompile
    if (!screenMat.map) screenMat.needsUpdate = true;
    screenMat.map = tex;
  }
  const t1 = performance.now();
  draw();
  const gl = renderer.getContext();
  gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
  const t2 = performance.now();
  if (job.raw) {
    const px = readFrame(job.width, job.height);
    const rgba = new Uint8Array(px.length);
    const row = job.width * 4;
    for (let y = 0; y < job.height; y++)
      rgba.set(px.subarray((job.height - 1 - y) * row, (job.height - y) * row), y * row);
    return {
      dataUrl: "",
      rgba: toBase64(rgba),
      width: job.width,
      height: job.height,
      timings: { stage: t1 - t0, draw: t2 - t1, encode: performance.now() - t2 },
    };
  }
  const dataUrl = renderer.domElement.toDataURL(job.mime, job.quality);
  const t3 = performance.now();
  return {
    dataUrl,
    width: job.width,
    height: job.height,
    timings: { stage: t1 - t0, draw: t2 - t1, encode: t3 - t2 },
  };
}

function draw(): void {
  renderer.clear();
  renderer.render(bgScene, bgCamera);
  renderer.clearDepth();
  renderer.render(scene, camera);
}

function readFrame(w: number, h: number): Uint8Array {
  const gl = renderer.getContext();
  const px = new Uint8Array(w * h * 4);
  gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
  return px;
}

function toBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i += 0x8000)
    parts.push(String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]));
  return btoa(parts.join(""));
}

/** The screen's value in the probe pass: sRGB 128/255 leaves room for anything added over the screen. */
const PROBE = 128;

/**
 * Renders the plate of a look: the frame with the screen black (everything under and over it), then
 * with the screen a flat grey; the difference is the screen's coverage (edges, and whatever is drawn
 * over it: a notch hides it, an additive sheen does not). A frame is then plate + coverage × page.
 */
async function plate(job: ComposeJob): Promise<PlateResult> {
  const t0 = performance.now();
  const device = stageDevice(job);
  const screenMat = device.screen.material;
  if (screenMat.map) {
    screenMat.map = null;
    screenMat.needsUpdate = true;
  }
  stageScene(job, device);
  const t1 = performance.now();
  screenMat.color.setRGB(0, 0, 0, THREE.SRGBColorSpace);
  draw();
  const dark = readFrame(job.width, job.height);
  screenMat.color.setRGB(PROBE / 255, PROBE / 255, PROBE / 255, THREE.SRGBColorSpace);
  draw();
  const grey = readFrame(job.width, job.height);
  screenMat.color.setRGB(1, 1, 1);
  const t2 = performance.now();
  const { width: w, height: h } = job;
  const out = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) {
    let i = (h - 1 - y) * w * 4;
    let o = y * w * 4;
    for (let x = 0; x < w; x++, i += 4, o += 4) {
      out[o] = dark[i];
      out[o + 1] = dark[i + 1];
      out[o + 2] = dark[i + 2];
      const d = (grey[i] - dark[i] + grey[i + 1] - dark[i + 1] + grey[i + 2] - dark[i + 2]) / (3 * PROBE);
      out[o + 3] = d >= 0.97 ? 255 : d <= 0.02 ? 0 : Math.round(d * 255);
    }
  }
  const corners = screenCorners(device, job);
  return {
    rgba: toBase64(out),
    width: w,
    height: h,
    corners,
    timings: { stage: t1 - t0, draw: t2 - t1, pack: performance.now() - t2 },
  };
}

/** Frame pixels of the screen's top-left, top-right, bottom-right and bottom-left corners. */
function screenCorners(device: Device, job: ComposeJob): [number, number][] {
  const corners: [number, number][] = [];
  const sw = device.screenWidth / 2;
  const sh = device.screenHeight / 2;
  device.group.updateMatrixWorld(true);
  camera.updateMatrixWorld();
  for (const [x, y] of [
    [-sw, sh],
    [sw, sh],
    [sw, -sh],
    [-sw, -sh],
  ]) {
    const p = device.screen.localToWorld(new THREE.Vector3(x, y, 0)).project(camera);
    corners.push([(p.x * 0.5 + 0.5) * job.width, (0.5 - p.y * 0.5) * job.height]);
  }
  return corners;
}

/** Camera, lights, shadow catcher, output size and backdrop for the look. */
function stageScene(job: ComposeJob, device: Device): void {
  const { look } = job;

  const group = device.group;
  group.rotation.set(rad(look.rotation[0]), rad(look.rotation[1]), rad(look.rotation[2]), "YXZ");
  group.position.set(0, 0, 0);
  group.updateMatrixWorld(true);
  const box = new THREE.Box3().setFromObject(group);
  if (look.shadow.surface === "floor") group.position.y -= box.min.y;
  group.updateMatrixWorld(true);
  box.setFromObject(group);
  const center = box.getCenter(new THREE.Vector3());
  const size = box.getSize(new THREE.Vector3());
  const radius = size.length() / 2;

  camera.fov = look.camera.fov;
  camera.aspect = job.width / job.height;
  const dir = new THREE.Vector3(
    Math.sin(rad(look.camera.azimuth)) * Math.cos(rad(look.camera.elevation)),
    Math.sin(rad(look.camera.elevation)),
    Math.cos(rad(look.camera.azimuth)) * Math.cos(rad(look.camera.elevation)),
  ).normalize();
  camera.near = 0.01;
  camera.far = 1e5;
  const dist = frameDevice(
    group,
    center,
    dir,
    look.camera.margin,
    job.framing,
    look.camera.lift ?? 0,
    job.width,
    job.height,
  );
  camera.near = Math.max(0.01, dist / 100);
  camera.far = dist * 20 + radius * 10;
  camera.updateProjectionMatrix();
  const motion = job.motion;
  if (motion && (motion.yaw !== 0 || motion.azimuth !== 0 || motion.elevation !== 0)) {
    // turned about the device's own centre, the framing of the still kept
    const pivot = center.clone();
    group.position
      .sub(pivot)
      .applyAxisAngle(new THREE.Vector3(0, 1, 0), rad(motion.yaw))
      .add(pivot);
    group.rotateOnWorldAxis(new THREE.Vector3(0, 1, 0), rad(motion.yaw));
    group.updateMatrixWorld(true);
    const az = rad(look.camera.azimuth + motion.azimuth);
    const el = rad(look.camera.elevation + motion.elevation);
    const moved = new THREE.Vector3(Math.sin(az) * Math.cos(el), Math.sin(el), Math.cos(az) * Math.cos(el));
    camera.position.copy(center).addScaledVector(moved.normalize(), dist);
    camera.lookAt(center);
    camera.updateMatrixWorld();
  }

  // light direction is relative to the camera's side, so every angle keeps the same mood
  const la = rad(look.camera.azimuth + look.light.azimuth);
  const le = rad(look.light.elevation);
  const lightDir = new THREE.Vector3(Math.sin(la) * Math.cos(le), Math.sin(le), Math.cos(la) * Math.cos(le));
  key.position.copy(center).addScaledVector(lightDir, radius * 4);
  key.target.position.copy(center);
  key.intensity = look.light.key;
  key.color.setHSL(
    look.light.warmth >= 0 ? 0.09 : 0.6,
    Math.abs(look.light.warmth) * 0.6,
    0.5 + 0.5 * (1 - Math.abs(look.light.warmth)),
  );
  hemi.intensity = look.light.fill;
  scene.environmentIntensity = look.light.env;
  const sc = key.shadow.camera;
  sc.left = -radius * 2.6;
  sc.right = radius * 2.6;
  sc.top = radius * 2.6;
  sc.bottom = -radius * 2.6;
  sc.near = radius * 0.5;
  sc.far = radius * 12;
  sc.updateProjectionMatrix();
  key.shadow.radius = 3 + look.shadow.softness * 5;
  const shadowKey = JSON.stringify([
    job.motion ?? null,
    look.device,
    look.finish,
    look.rotation,
    look.camera,
    look.light,
    look.shadow,
  ]);
  if (shadowKey !== lastShadowKey) {
    renderer.shadowMap.needsUpdate = true;
    lastShadowKey = shadowKey;
  }

  catcher.scale.setScalar((radius * 5) / 400);
  const mat = catcher.material as THREE.ShadowMaterial;
  mat.opacity = look.shadow.opacity * (job.theme === "dark" ? 1.3 : 1);
  contact.visible = look.shadow.surface === "floor";
  if (look.shadow.surface === "floor") {
    catcher.rotation.set(-Math.PI / 2, 0, 0);
    catcher.position.set(center.x, box.min.y - 0.001, center.z);
    // the footprint of the turned device, a little larger than it (the blur is inside the texture)
    contact.position.set(center.x, box.min.y - 0.0005, center.z);
    contact.scale.set(size.x * 1.6, size.z * 1.6, 1);
    (contact.material as THREE.MeshBasicMaterial).opacity = job.theme === "dark" ? 0.9 : 0.5;
  } else {
    // a backdrop facing the camera, a little behind the device
    catcher.position.copy(center).addScaledVector(dir, -(radius * 0.9));
    catcher.lookAt(camera.position);
  }

  const current = renderer.getSize(new THREE.Vector2());
  if (current.x !== job.width || current.y !== job.height) renderer.setSize(job.width, job.height, false);
  const bgMat = bgQuad.material as THREE.MeshBasicMaterial;
  const bgTex = backgroundTexture(look.background[job.theme], job.width, job.height);
  if (bgMat.map !== bgTex) {
    if (!bgMat.map) bgMat.needsUpdate = true;
    bgMat.map = bgTex;
  }
}

(window as unknown as { __compose: unknown }).__compose = {
  render,
  plate,
  info: () => {
    const gl = renderer.getContext();
    const dbg = gl.getExtension("WEBGL_debug_renderer_info");
    return {
      renderer: dbg ? gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER),
      maxTexture: gl.getParameter(gl.MAX_TEXTURE_SIZE),
    };
  },
};
(window as unknown as { __composeReady: boolean }).__composeReady = true;
