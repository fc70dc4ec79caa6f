// Runs inside the compositor page (Chromium): device models built from three.js primitives.

import type { DeviceKind, StyleLook } from "@site/domain/screenshots";
import * as THREE from "three";
import { RoundedBoxGeometry } from "three/addons/geometries/RoundedBoxGeometry.js";
import { SCREENS, WINDOW_SCREEN } from "./screens.ts";

/** A built device: its group, the screen mesh whose map is the capture, and the screen's size. */
export type Device = {
  group: THREE.Group;
  screen: THREE.Mesh<THREE.BufferGeometry, THREE.MeshBasicMaterial>;
  screenWidth: number;
  screenHeight: number;
  /** When set, the screen's height follows the content (browser window); receives width/height ratio. */
  fitAspect?: (heightOverWidth: number) => void;
};

const FINISHES: Record<StyleLook["finish"], { color: string; metalness: number; roughness: number }> = {
  silver: { color: "#c9ccd2", metalness: 0.85, roughness: 0.3 },
  graphite: { color: "#4a4c51", metalness: 0.8, roughness: 0.38 },
  midnight: { color: "#2b3240", metalness: 0.75, roughness: 0.3 },
  white: { color: "#f4f4f6", metalness: 0.1, roughness: 0.45 },
};

function roundedRect(w: number, h: number, r: number): THREE.Shape {
  const x = -w / 2;
  const y = -h / 2;
  const rr = Math.min(r, w / 2, h / 2);
  const s = new THREE.Shape();
  s.moveTo(x + rr, y);
  s.lineTo(x + w - rr, y);
  s.quadraticCurveTo(x + w, y, x + w, y + rr);
  s.lineTo(x + w, y + h - rr);
  s.quadraticCurveTo(x + w, y + h, x + w - rr, y + h);
  s.lineTo(x + rr, y + h);
  s.quadraticCurveTo(x, y + h, x, y + h - rr);
  s.lineTo(x, y + rr);
  s.quadraticCurveTo(x, y, x + rr, y);
  return s;
}

/** A rounded slab in the XY plane, `depth` thick, centred on z = 0, with softly bevelled edges. */
function slab(
  w: number,
  h: number,
  depth: number,
  r: number,
  mat: THREE.Material | THREE.Material[],
): THREE.Mesh {
  const bevel = Math.min(depth * 0.35, r * 0.5, 0.02);
  const geo = new THREE.ExtrudeGeometry(
    roundedRect(w - bevel * 2, h - bevel * 2, Math.max(0.001, r - bevel)),
    {
      depth: Math.max(0.0005, depth - bevel * 2),
      bevelEnabled: bevel > 0,
      bevelThickness: bevel,
      bevelSize: bevel,
      bevelSegments: 4,
      curveSegments: 16,
    },
  );
  geo.translate(0, 0, -(depth - bevel * 2) / 2);
  const mesh = new THREE.Mesh(geo, mat);
  mesh.castShadow = true;
  return mesh;
}

/** A flat rounded screen with UVs 0..1 over its bounds. */
function screenMesh(
  w: number,
  h: number,
  r: number,
): THREE.Mesh<THREE.BufferGeometry, THREE.MeshBasicMaterial> {
  const geo = new THREE.ShapeGeometry(roundedRect(w, h, r), 24);
  const pos = geo.attributes.position as THREE.BufferAttribute;
  const uv = new Float32Array(pos.count * 2);
  for (let i = 0; i < pos.count; i++) {
    uv[i * 2] = (pos.getX(i) + w / 2) / w;
    uv[i * 2 + 1] = (pos.getY(i) + h / 2) / h;
  }
  geo.setAttribute("uv", new THREE.BufferAttribute(uv, 2));
  const mat = new THREE.MeshBasicMaterial({ color: 0xffffff, toneMapped: false });
  return new THREE.Mesh(geo, mat);
}

let sheenTexture: THREE.CanvasTexture | null = null;

/** A faint diagonal reflection laid over a glass screen. */
function glassSheen(screen: THREE.Mesh): THREE.Mesh {
  if (!sheenTexture) {
    const c = document.createElement("canvas");
    c.width = 256;
    c.height = 256;
    const g = c.getContext("2d") as CanvasRenderingContext2D;
    const grad = g.createLinearGradient(0, 0, 256, 256);
    grad.addColorStop(0, "rgba(255,255,255,0.9)");
    grad.addColorStop(0.38, "rgba(255,255,255,0.35)");
    grad.addColorStop(0.39, "rgba(255,255,255,0.0)");
    grad.addColorStop(1, "rgba(255,255,255,0.0)");
    g.fillStyle = grad;
    g.fillRect(0, 0, 256, 256);
    sheenTexture = new THREE.CanvasTexture(c);
  }
  const mat = new THREE.MeshBasicMaterial({
    map: sheenTexture,
    transparent: true,
    opacity: 0.06,
    blending: THREE.AdditiveBlending,
    depthWrite: false,
    toneMapped: false,
  });
  const sheen = new THREE.Mesh(screen.geometry, mat);
  sheen.position.copy(screen.position);
  sheen.position.z += 0.0008;
  sheen.renderOrder = 1;
  return sheen;
}

function metal(finish: StyleLook["finish"]): THREE.MeshStandardMaterial {
  const f = FINISHES[finish];
  return new THREE.MeshStandardMaterial({ color: f.color, metalness: f.metalness, roughness: f.roughness });
}

const glassBlack = () =>
  new THREE.MeshStandardMaterial({ color: "#07070a", metalness: 0.2, roughness: 0.12 });

function laptop(finish: StyleLook["finish"]): Device {
  const group = new THREE.Group();
  const body = metal(finish);
  const sw = SCREENS.laptop.width;
  const sh = SCREENS.laptop.height;
  const lidW = 3.16;
  const lidH = 2.08;
  const baseD = 2.16;
  const baseT = 0.07;

  const base = slab(lidW, baseD, baseT, 0.12, body);
  base.rotation.x = -Math.PI / 2;
  base.position.y = baseT / 2;
  group.add(base);

  const well = new THREE.Mesh(
    new THREE.ShapeGeometry(roundedRect(2.62, 1.0, 0.04)),
    new THREE.MeshStandardMaterial({
      color: finish === "silver" ? "#b9bcc2" : "#2f3034",
      roughness: 0.6,
      metalness: 0.4,
    }),
  );
  well.rotation.x = -Math.PI / 2;
  well.position.set(0, baseT + 0.001, -0.32);
  group.add(well);
  // keys with rounded, slightly bevelled caps: the environment light draws a highlight on each edge
  const keyGeo = new RoundedBoxGeometry(0.148, 0.009, 0.132, 2, 0.003);
  const keyMat = new THREE.MeshStandardMaterial({
    color: finish === "silver" ? "#3a3b40" : "#1c1d20",
    roughness: 0.75,
    metalness: 0.05,
  });
  const cols = 14;
  const rows = 6;
  const keys = new THREE.InstancedMesh(keyGeo, keyMat, cols * rows);
  const m = new THREE.Matrix4();
  let k = 0;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const sx = r === rows - 1 && c >= 5 && c <= 9 ? (c === 5 ? 6.1 : 0.0001) : 1;
      const x = -1.22 + c * 0.1877 + (sx > 1 ? 0.3754 : 0);
      m.makeScale(sx, 1, 1).setPosition(x, baseT + 0.007, -0.76 + r * 0.178);
      keys.setMatrixAt(k++, m);
    }
  }
  group.add(keys);
  const pad = new THREE.Mesh(
    new THREE.ShapeGeometry(roundedRect(1.2, 0.74, 0.06)),
    new THREE.MeshStandardMaterial({ color: FINISHES[finish].color, metalness: 0.6, roughness: 0.22 }),
  );
  pad.rotation.x = -Math.PI / 2;
  pad.position.set(0, baseT + 0.0012, 0.6);
  group.add(pad);

  const lid = new THREE.Group();
  const shell = slab(lidW, lidH, 0.03, 0.12, body);
  shell.position.set(0, lidH / 2, -0.018);
  lid.add(shell);
  const bezel = slab(lidW - 0.012, lidH - 0.012, 0.006, 0.115, glassBlack());
  bezel.position.set(0, lidH / 2, 0.0);
  lid.add(bezel);
  const screen = screenMesh(sw, sh, 0.035);
  screen.position.set(0, lidH / 2 + 0.015, 0.0035);
  lid.add(screen, glassSheen(screen));
  const cam = new THREE.Mesh(
    new THREE.CircleGeometry(0.014, 16),
    new THREE.MeshBasicMaterial({ color: "#1c2230" }),
  );
  cam.position.set(0, lidH / 2 + 0.015 + sh / 2 + 0.045, 0.004);
  lid.add(cam);
  lid.position.set(0, baseT, -baseD / 2 + 0.04);
  lid.rotation.x = -0.24;
  group.add(lid);
  return { group, screen, screenWidth: sw, screenHeight: sh };
}

function monitor(finish: StyleLook["finish"]): Device {
  const group = new THREE.Group();
  const body = metal(finish);
  const sw = SCREENS.monitor.width;
  const sh = SCREENS.monitor.height;
  const pw = sw + 0.2;
  const ph = sh + 0.2;
  const lift = 1.3;
  const shell = slab(pw, ph, 0.1, 0.06, body);
  shell.position.set(0, lift + ph / 2, -0.055);
  group.add(shell);
  const bezel = slab(pw - 0.01, ph - 0.01, 0.006, 0.055, glassBlack());
  bezel.position.set(0, lift + ph / 2, 0);
  group.add(bezel);
  const screen = screenMesh(sw, sh, 0.01);
  screen.position.set(0, lift + ph / 2, 0.0035);
  group.add(screen, glassSheen(screen));
  const neck = slab(0.85, 1.75, 0.05, 0.04, body);
  neck.position.set(0, 0.95, -0.32);
  neck.rotation.x = 0.12;
  group.add(neck);
  const foot = slab(1.15, 1.0, 0.04, 0.1, body);
  foot.rotation.x = -Math.PI / 2;
  foot.position.set(0, 0.02, -0.25);
  group.add(foot);
  return { group, screen, screenWidth: sw, screenHeight: sh };
}

function tablet(finish: StyleLook["finish"]): Device {
  const group = new THREE.Group();
  const sw = SCREENS.tablet.width;
  const sh = SCREENS.tablet.height;
  const shell = slab(sw + 0.26, sh + 0.26, 0.06, 0.24, metal(finish));
  shell.position.z = -0.032;
  group.add(shell);
  const bezel = slab(sw + 0.25, sh + 0.25, 0.004, 0.235, glassBlack());
  group.add(bezel);
  const screen = screenMesh(sw, sh, 0.12);
  screen.position.z = 0.0025;
  group.add(screen, glassSheen(screen));
  const cam = new THREE.Mesh(
    new THREE.CircleGeometry(0.018, 16),
    new THREE.MeshBasicMaterial({ color: "#1c2230" }),
  );
  cam.position.set(0, sh / 2 + 0.065, 0.003);
  group.add(cam);
  return { group, screen, screenWidth: sw, screenHeight: sh };
}

function phone(finish: StyleLook["finish"]): Device {
  const group = new THREE.Group();
  const sw = SCREENS.phone.width;
  const sh = SCREENS.phone.height;
  const band = metal(finish);
  const shell = slab(sw + 0.09, sh + 0.09, 0.085, 0.165, band);
  shell.position.z = -0.043;
  group.add(shell);
  const bezel = slab(sw + 0.085, sh + 0.085, 0.004, 0.16, glassBlack());
  group.add(bezel);
  const screen = screenMesh(sw, sh, 0.13);
  screen.position.z = 0.0025;
  group.add(screen, glassSheen(screen));
  const island = slab(0.3, 0.088, 0.002, 0.044, new THREE.MeshBasicMaterial({ color: "#000000" }));
  island.position.set(0, sh / 2 - 0.075, 0.004);
  group.add(island);
  for (const [y, h, side] of [
    [0.55, 0.22, -1],
    [0.28, 0.22, -1],
    [0.4, 0.34, 1],
  ] as const) {
    const b = new THREE.Mesh(new THREE.BoxGeometry(0.012, h, 0.03), band);
    b.position.set(side * (sw / 2 + 0.05), y, -0.04);
    group.add(b);
  }
  return { group, screen, screenWidth: sw, screenHeight: sh };
}

function browserWindow(finish: StyleLook["finish"]): Device {
  const group = new THREE.Group();
  const sw = WINDOW_SCREEN.width;
  const state = { h: 2.2 };
  const edgeMat = new THREE.MeshStandardMaterial({
    color: finish === "white" ? "#c9ccd3" : "#3a3c42",
    roughness: 0.5,
    metalness: 0,
  });
  const screen = screenMesh(sw, state.h, 0.05);
  let edge = slab(sw + 0.012, state.h + 0.012, 0.012, 0.056, edgeMat);
  edge.position.z = -0.007;
  group.add(edge, screen);
  const device: Device = {
    group,
    screen,
    screenWidth: sw,
    screenHeight: state.h,
    fitAspect: (ratio: number) => {
      const h = sw * ratio;
      if (Math.abs(h - device.screenHeight) < 1e-4) return;
      device.screenHeight = h;
      const fresh = screenMesh(sw, h, 0.05);
      screen.geometry.dispose();
      screen.geometry = fresh.geometry;
      group.remove(edge);
      edge.geometry.dispose();
      edge = slab(sw + 0.012, h + 0.012, 0.012, 0.056, edgeMat);
      edge.position.z = -0.007;
      group.add(edge);
    },
  };
  return device;
}

const BUILDERS: Record<DeviceKind, (finish: StyleLook["finish"]) => Device> = {
  laptop,
  monitor,
  tablet,
  phone,
  window: browserWindow,
};

/** Builds a device of the given kind and finish. */
export function buildDevice(kind: DeviceKind, finish: StyleLook["finish"]): Device {
  return BUILDERS[kind](finish);
}
