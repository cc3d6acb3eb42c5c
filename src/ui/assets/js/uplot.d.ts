// uPlot (the meter charts, npm package `uplot`): scripts/build.mjs copies its ES module build
// beside these modules as uplot.js; its own declarations describe it.
export { default } from 'uplot';
