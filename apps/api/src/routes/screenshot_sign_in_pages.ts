import { SCREEN } from "@site/browser";
import { escapeHtml } from "@site/domain/core";

function layout(title: string, body: string, script = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title>
<style>body{margin:0;font:15px/1.5 system-ui,sans-serif;background:#0f1117;color:#e8e8ee}main{max-width:1320px;margin:0 auto;padding:24px}
h1{font-size:20px;margin:0 0 8px}p{color:#a8a8b8;margin:0 0 16px}.bar{display:flex;gap:12px;align-items:center;margin-bottom:12px}
button{font:inherit;padding:8px 18px;border-radius:8px;border:0;background:#5b5bf7;color:#fff;cursor:pointer}button:disabled{opacity:.5}
#screen{width:100%;max-width:${SCREEN.width}px;aspect-ratio:${SCREEN.width}/${SCREEN.height};background:#1b1e27;border-radius:8px;display:block;cursor:default;outline:none}
#status{font-size:13px;color:#8c8ca0}</style></head><body><main>${body}</main>${script}</body></html>`;
}

/** The page of a link that is unknown, expired or already used. */
export function refusedPage(): string {
  return layout(
    "Sign-in link not valid",
    `<h1>This sign-in link is not valid any more</h1><p>It expired or was already used. Ask for a new one (POST …/media/screenshot-login) and open it within the hour.</p>`,
  );
}

/** The page when this deployment has no hosted browser: credentials must be given by hand. */
export function manualPage(sourceUrl: string): string {
  return layout(
    "Sign in by hand",
    `<h1>No hosted browser on this server</h1><p>Screenshots of <b>${escapeHtml(sourceUrl)}</b> need a signed-in session, but this deployment cannot show a live browser. Give the credentials by hand: ask your administrator to sign in on a render host, or make the page reachable without signing in (for example a preview URL with a token), then request the screenshot again with <code>recapture: true</code>.</p>`,
  );
}

/** The page after Done: the session is stored. */
export function savedPage(): string {
  return layout(
    "Signed in",
    `<h1>Session saved</h1><p>You can close this tab. Later screenshots of this site start signed in.</p>`,
  );
}

/** The live sign-in page: a screencast of the hosted browser, mouse and keyboard forwarded, and Done. */
export function interactivePage(sourceUrl: string): string {
  const body = `<h1>Sign in to ${escapeHtml(new URL(sourceUrl).host)}</h1>
<p>This is a live browser on our render host. Sign in as you normally would, then press <b>Done</b>: its cookies and local storage are stored encrypted for this site's screenshots.</p>
<div class="bar"><button id="done" disabled>Done</button><span id="status">Starting the browser…</span></div>
<img id="screen" tabindex="0" alt="live browser" draggable="false">`;
  const script = `<script>
const W=${SCREEN.width},H=${SCREEN.height};
const img=document.getElementById("screen"),done=document.getElementById("done"),status=document.getElementById("status");
const ws=new WebSocket(location.href.replace(/^http/,"ws").replace(/[?#].*$/,"")+"/ws");
const send=(m)=>{if(ws.readyState===1)ws.send(JSON.stringify(m))};
ws.onmessage=(ev)=>{const m=JSON.parse(ev.data);
 if(m.t==="frame"){img.src="data:image/jpeg;base64,"+m.data;done.disabled=false;status.textContent="Live";}
 else if(m.t==="saved"){document.open();document.write(${JSON.stringify(savedPage())});document.close();}
 else if(m.t==="error"){status.textContent=m.message;done.disabled=true;}};
ws.onclose=(ev)=>{if(status.textContent==="Live"){status.textContent=ev.reason||"Disconnected";done.disabled=true;}};
const pos=(e)=>{const r=img.getBoundingClientRect();return{x:Math.max(0,Math.min(W,(e.clientX-r.left)*W/r.width)),y:Math.max(0,Math.min(H,(e.clientY-r.top)*H/r.height))}};
let last=0;img.addEventListener("mousemove",(e)=>{const n=Date.now();if(n-last<40)return;last=n;send({t:"mouse",type:"move",...pos(e)})});
img.addEventListener("mousedown",(e)=>{e.preventDefault();img.focus();send({t:"mouse",type:"down",...pos(e)})});
img.addEventListener("mouseup",(e)=>send({t:"mouse",type:"up",...pos(e)}));
img.addEventListener("wheel",(e)=>{e.preventDefault();send({t:"wheel",...pos(e),dx:e.deltaX,dy:e.deltaY})},{passive:false});
const SPECIAL=["Enter","Backspace","Tab","Delete","Escape","ArrowLeft","ArrowRight","ArrowUp","ArrowDown","Home","End"];
img.addEventListener("keydown",(e)=>{if(e.metaKey||e.ctrlKey)return;e.preventDefault();
 if(SPECIAL.includes(e.key))send({t:"key",key:e.key});else if(e.key.length===1)send({t:"text",text:e.key});});
img.addEventListener("paste",(e)=>{const t=e.clipboardData.getData("text");if(t)send({t:"text",text:t.slice(0,200)})});
done.onclick=()=>{done.disabled=true;status.textContent="Saving…";send({t:"done"})};
</script>`;
  return layout("Sign in for screenshots", body, script);
}
