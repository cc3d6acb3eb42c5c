// uPlot (the meter charts, npm package `uplot`): src/ui/page.ts serves the package's minified build
// as the module ui/uplot.js (its `uPlot` as the default export); its own declarations describe it.
export { default } from 'uplot';
