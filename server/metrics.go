package server

import (
	"github.com/prometheus/client_golang/prometheus"
)

// nodeMetrics are a Node's Prometheus metrics, each labelled with the
// node's id, served at /metrics of the Server the Node is given to.
type nodeMetrics struct {
	loads          prometheus.Counter
	loadFailures   prometheus.Counter
	takeovers      prometheus.Counter
	persists       *prometheus.CounterVec
	persistBytes   prometheus.Counter
	persistSeconds prometheus.Histogram
	proxied        *prometheus.CounterVec
	all            []prometheus.Collector
}

func newNodeMetrics(n *Node) *nodeMetrics {
	labels := prometheus.Labels{"node": n.cfg.ID}
	m := &nodeMetrics{
		loads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wasmeval_session_loads_total", ConstLabels: labels,
			Help: "Sessions loaded from the store into this node (after a restart, a takeover, or a move).",
		}),
		loadFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wasmeval_session_load_failures_total", ConstLabels: labels,
			Help: "Loads from the store that failed for another reason than a missing session.",
		}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wasmeval_session_takeovers_total", ConstLabels: labels,
			Help: "Sessions this node took over from another node whose lease had expired.",
		}),
		persists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasmeval_persists_total", ConstLabels: labels,
			Help: "Saves of session state to the store, by outcome: ok, stale (another node holds the session), unavailable (the store is down), error.",
		}, []string{"outcome"}),
		persistBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wasmeval_persist_bytes_total", ConstLabels: labels,
			Help: "Bytes the saves of session state wrote to the store: new Python frames, changed files, the record (its metadata and Python index).",
		}),
		persistSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "wasmeval_persist_duration_seconds", ConstLabels: labels,
			Help:    "Wall-clock time of a save to the store.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12),
		}),
		proxied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasmeval_proxied_requests_total", ConstLabels: labels,
			Help: "Requests passed on to the node holding their session, by outcome: ok, or unreachable (that node did not answer).",
		}, []string{"outcome"}),
	}
	m.all = []prometheus.Collector{
		m.loads, m.loadFailures, m.takeovers, m.persists, m.persistBytes, m.persistSeconds, m.proxied,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wasmeval_node_info", ConstLabels: labels,
			Help: "1, labelled with this node's id (serve --node-id).",
		}, func() float64 { return 1 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wasmeval_sessions_owned", ConstLabels: labels,
			Help: "Sessions this node holds the lease of (with one node and no leases: the sessions it holds).",
		}, func() float64 { return float64(n.owned()) }),
	}
	return m
}
