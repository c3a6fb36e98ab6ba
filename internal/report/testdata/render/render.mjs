// Renders Markdown as GitHub shows a pull request comment, in headless
// Chromium, and measures what a reader sees. Driven by internal/report's
// TestRenderedAsGitHub; not a tool of its own.
//
//   node render.mjs job.json   (writes job.result)
//
// The Markdown goes through GFM (remark-gfm, the cmark-gfm extensions:
// tables, strikethrough, autolinks, task lists, footnotes) with line
// breaks kept as GitHub does in comments (remark-breaks), raw HTML is
// parsed (rehype-raw) and then cleaned with hast-util-sanitize's default
// schema, which is GitHub's allowlist (comments dropped, no script, no
// event handlers, ids prefixed with user-content-); GitHub's own
// stylesheet for Markdown (github-markdown-css, light or dark) styles it,
// inside a frame with the width GitHub gives a comment at that viewport
// (1000 px: the timeline beside the sidebar; 430 px: the phone layout).
// ```mermaid blocks are drawn by mermaid, as GitHub does, when the page is
// expanded (every <details> opened).
//
// job.json: {chromium, outDir, result, widths: [..], schemes: ["light", "dark"],
//            pages: [{name, markdown, needles: [..]}]}
// Output, one entry per page, width and scheme: what each needle's text
// looks like (found, visible without horizontal scrolling, why not), the
// cells of every table that are cut off, the page's own horizontal
// overflow, the headings, images, links, <details> and the page text, the
// mermaid charts drawn or failed, and the screenshots written.

import {readFileSync, writeFileSync, mkdirSync} from 'node:fs';
import {createRequire} from 'node:module';
import path from 'node:path';
import {unified} from 'unified';
import remarkParse from 'remark-parse';
import remarkGfm from 'remark-gfm';
import remarkBreaks from 'remark-breaks';
import remarkRehype from 'remark-rehype';
import rehypeRaw from 'rehype-raw';
import rehypeSanitize, {defaultSchema} from 'rehype-sanitize';
import rehypeStringify from 'rehype-stringify';
import {chromium} from 'playwright-core';

const require = createRequire(import.meta.url);
const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const cssPath = (scheme) => require.resolve(`github-markdown-css/github-markdown-${scheme}.css`);
const mermaidPath = require.resolve('mermaid/dist/mermaid.min.js');

const toHTML = unified()
  .use(remarkParse)
  .use(remarkGfm)
  .use(remarkBreaks) // a comment, unlike a .md file, breaks lines where the text does
  .use(remarkRehype, {allowDangerousHtml: true})
  .use(rehypeRaw)
  .use(rehypeSanitize, defaultSchema)
  .use(rehypeStringify);

// The frame: GitHub's pull request timeline at >= 768 px (container
// padding 24, a 220 px sidebar with a 16 px gutter, the 56 px avatar
// column, a bordered comment with 16 px padding) and its phone layout
// below 768 px (16 px padding, no sidebar, no avatar column).
const frameCSS = `
  body { margin: 0; }
  .page { display: flex; gap: 16px; padding: 16px 24px; box-sizing: border-box; }
  .timeline { flex: 1; min-width: 0; padding-left: 56px; }
  .sidebar { width: 220px; flex: none; }
  .comment { border: 1px solid var(--borderColor-default, #d1d9e0); border-radius: 6px; }
  .comment-header { padding: 8px 16px; font: 14px -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
    border-bottom: 1px solid var(--borderColor-default, #d1d9e0); }
  .markdown-body { padding: 16px; font-size: 14px; } /* a comment's body, not a README's 16 px */
  @media (max-width: 767px) {
    .page { padding: 16px; }
    .timeline { padding-left: 0; }
    .sidebar { display: none; }
  }`;

function pageHTML(body, scheme) {
  const css = readFileSync(cssPath(scheme), 'utf8');
  const bg = scheme === 'dark' ? '#0d1117' : '#ffffff';
  return `<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${css}</style><style>${frameCSS} body { background: ${bg}; }</style></head>
<body><div class="page"><div class="timeline"><div class="comment">
<div class="comment-header markdown-body" style="padding: 8px 16px"><b>github-actions</b> bot commented</div>
<div class="markdown-body" id="md">${body}</div></div></div><div class="sidebar"></div></div></body></html>`;
}

// measure runs in the page.
function measure(needles) {
  const md = document.getElementById('md');
  const vw = window.innerWidth;
  const within = (r) => r.width > 0 && r.left >= -0.5 && r.right <= vw + 0.5;
  // clippedBy returns the first ancestor that hides part of rect.
  const clippedBy = (node, r) => {
    for (let el = node.nodeType === 1 ? node : node.parentElement; el && el !== document.body; el = el.parentElement) {
      const cs = getComputedStyle(el);
      if (cs.display === 'none' || cs.visibility === 'hidden') return el.tagName.toLowerCase() + ' is hidden';
      if (cs.overflowX !== 'visible') {
        const a = el.getBoundingClientRect();
        const left = a.left + el.clientLeft, right = left + el.clientWidth;
        if (r.left < left - 0.5 || r.right > right + 0.5) return el.tagName.toLowerCase() + ' scrolls horizontally';
      }
    }
    return '';
  };
  const textNodes = [];
  let all = '';
  const walker = document.createTreeWalker(md, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    textNodes.push([walker.currentNode, all.length]);
    all += walker.currentNode.data;
  }
  const locate = (offset) => {
    for (let i = textNodes.length - 1; i >= 0; i--) {
      if (textNodes[i][1] <= offset) return [textNodes[i][0], offset - textNodes[i][1]];
    }
    return null;
  };
  const found = needles.map((needle) => {
    const at = all.replaceAll('\u2060', '').indexOf(needle);
    if (at < 0) return {needle, found: false, visible: false, why: 'not in the page'};
    // Map the offset back past any word joiners removed above.
    let start = 0, seen = 0;
    while (seen < at) { if (all[start] !== '\u2060') seen++; start++; }
    let end = start; seen = 0;
    while (seen < needle.length) { if (all[end] !== '\u2060') seen++; end++; }
    const range = document.createRange();
    const [sn, so] = locate(start), [en, eo] = locate(end - 1);
    range.setStart(sn, so);
    range.setEnd(en, eo + 1);
    const rects = [...range.getClientRects()].filter((r) => r.width > 0);
    if (rects.length === 0) return {needle, found: true, visible: false, why: 'not drawn (hidden or collapsed)'};
    for (const r of rects) {
      if (!within(r)) return {needle, found: true, visible: false, why: `outside the viewport (${Math.round(r.left)}..${Math.round(r.right)} of ${vw})`};
      const c = clippedBy(range.commonAncestorContainer, r);
      if (c) return {needle, found: true, visible: false, why: c};
    }
    return {needle, found: true, visible: true, why: ''};
  });
  const tables = [...md.querySelectorAll('table')].map((t) => {
    const cut = [];
    for (const cell of t.querySelectorAll('th, td')) {
      const r = cell.getBoundingClientRect();
      const c = within(r) ? clippedBy(cell, r) : 'outside the viewport';
      if (c) cut.push({text: cell.innerText, why: c});
    }
    return {columns: t.rows.length ? t.rows[0].cells.length : 0, cut};
  });
  return {
    viewport: vw,
    pageScrollWidth: document.documentElement.scrollWidth,
    markdownWidth: Math.round(md.getBoundingClientRect().width),
    needles: found,
    tables,
    headings: [...md.querySelectorAll('h1,h2,h3,h4,h5,h6')].map((h) => h.tagName.toLowerCase() + ' ' + h.innerText),
    images: md.querySelectorAll('img, picture, svg:not(.mermaid svg)').length,
    links: [...md.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')),
    details: md.querySelectorAll('details').length,
    text: md.innerText,
  };
}

async function drawMermaid(scheme) {
  const blocks = [...document.querySelectorAll('#md pre > code.language-mermaid')];
  window.mermaid.initialize({startOnLoad: false, theme: scheme === 'dark' ? 'dark' : 'default'});
  const nodes = blocks.map((code) => {
    const div = document.createElement('div');
    div.className = 'mermaid';
    div.textContent = code.textContent;
    code.parentElement.replaceWith(div);
    return div;
  });
  const errors = [];
  for (const node of nodes) {
    try {
      await window.mermaid.run({nodes: [node]});
    } catch (e) {
      errors.push(String(e && e.message || e));
    }
  }
  return {blocks: blocks.length, drawn: document.querySelectorAll('#md div.mermaid svg').length, errors};
}

mkdirSync(job.outDir, {recursive: true});
const browser = await chromium.launch({
  executablePath: job.chromium,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--disable-quic', '--disable-dev-shm-usage'],
});
const results = [];
try {
  const bodies = [];
  for (const p of job.pages) bodies.push(String(await toHTML.process(p.markdown)));
  for (const width of job.widths) {
    for (const scheme of job.schemes) {
      const ctx = await browser.newContext({viewport: {width, height: 900}, colorScheme: scheme, deviceScaleFactor: 1});
      const page = await ctx.newPage();
      // Nothing leaves the page: a hostile name must not fetch anything.
      let requests = [];
      await page.route('**/*', (route) => { requests.push(route.request().url()); route.abort(); });
      for (const [i, p] of job.pages.entries()) {
        requests = [];
        await page.setContent(pageHTML(bodies[i], scheme), {waitUntil: 'load'});
        const base = `${p.name}-${width}-${scheme}`;
        const m = await page.evaluate(measure, p.needles);
        const shot = path.join(job.outDir, base + '.png');
        await page.locator('.comment').screenshot({path: shot});
        let expanded = '';
        let mermaid = {blocks: 0, drawn: 0, errors: []};
        if (m.details > 0) {
          await page.evaluate(() => document.querySelectorAll('#md details').forEach((d) => { d.open = true; }));
          if (bodies[i].includes('language-mermaid')) {
            await page.addScriptTag({path: mermaidPath});
            mermaid = await page.evaluate(drawMermaid, scheme);
          }
          expanded = path.join(job.outDir, base + '-expanded.png');
          await page.locator('.comment').screenshot({path: expanded});
        }
        results.push({name: p.name, width, scheme, ...m, mermaid, requests: [...requests], screenshot: shot, expanded});
      }
      await ctx.close();
    }
  }
} finally {
  await browser.close();
}
// A file, not stdout: a large write to a pipe can fail with EAGAIN.
writeFileSync(job.result, JSON.stringify(results));
