// The box's icon: a printer, drawn small enough to read at 16 px. Served as /favicon.ico (the path a
// browser asks when a page names none, such as a JSON answer opened in a tab) and named by the page
// and the sign-in page, relatively, so under a prefix that serves the box it stays under the
// prefix. SVG with no script and no external reference; the CSP it is served under forbids both.
import { served } from './page.js';

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect x="8" y="3" width="16" height="8" rx="1" fill="#fff" stroke="#1f4e79" stroke-width="2"/>
<rect x="2" y="10" width="28" height="13" rx="3" fill="#1f4e79"/>
<circle cx="25" cy="15" r="1.6" fill="#7fd07f"/>
<rect x="8" y="19" width="16" height="10" rx="1" fill="#fff" stroke="#1f4e79" stroke-width="2"/>
<path d="M11 23h10M11 26h7" stroke="#1f4e79" stroke-width="1.5"/>
</svg>
`;

export const FAVICON = served(FAVICON_SVG);
