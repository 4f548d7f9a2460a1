// What the runtime uses of prom-client, bundled into its build in place of
// the whole package: the registry, counters, gauges, histograms and bucket
// generators. Left out are the default process metrics, summaries, the
// pushgateway and cluster aggregation, and with them the dependencies only
// they need (tdigest and bintrees, @opentelemetry/api): 3.1 MB of an
// install. prom-client is Apache-2.0; its licence ships as
// dist/prom-client.LICENSE.
exports.Registry = require("../node_modules/prom-client/lib/registry.js");
exports.Counter = require("../node_modules/prom-client/lib/counter.js");
exports.Gauge = require("../node_modules/prom-client/lib/gauge.js");
exports.Histogram = require("../node_modules/prom-client/lib/histogram.js");
exports.exponentialBuckets =
  require("../node_modules/prom-client/lib/bucketGenerators.js").exponentialBuckets;
exports.linearBuckets = require("../node_modules/prom-client/lib/bucketGenerators.js").linearBuckets;
