package nodeagent

import (
	"math"
	"time"
)

// MinSample: the shortest interval a rate is taken over (a reconcile
// that some event brought early reports the last rates again).
const MinSample = time.Second

// sampler turns the manager's cumulative counters into the rates per
// second the node reports (ZeroNFNodeStatus.IngressDropsPerSecond,
// NodeService.CounterRates), over the interval between two samples at
// least MinSample apart. A counter that went back (an NF gone with its
// counts) is a rate of 0 for that interval.
type sampler struct {
	pid   int64
	at    time.Time
	last  map[string]int64
	rates map[string]int64
}

// sample takes the counters at now (a new manager pid starts afresh) and
// answers the rates: of the keys of the last interval; an empty map
// until two samples were taken.
func (s *sampler) sample(pid int64, now time.Time, counters map[string]int64) map[string]int64 {
	if pid != s.pid || s.last == nil {
		s.pid, s.at, s.last, s.rates = pid, now, counters, map[string]int64{}
		return s.rates
	}
	dt := now.Sub(s.at)
	if dt < MinSample {
		return s.rates
	}
	rates := map[string]int64{}
	for k, v := range counters {
		if old, ok := s.last[k]; ok {
			rates[k] = int64(math.Round(float64(max(v-old, 0)) / dt.Seconds()))
		}
	}
	s.at, s.last, s.rates = now, counters, rates
	return rates
}
