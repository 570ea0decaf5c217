package nodeagent

import (
	"testing"
	"time"
)

func TestSamplerRates(t *testing.T) {
	var s sampler
	t0 := time.Unix(1000, 0)
	if r := s.sample(7, t0, map[string]int64{"a": 100, "b": 50}); len(r) != 0 {
		t.Fatalf("first sample: %v, want none", r)
	}
	r := s.sample(7, t0.Add(2*time.Second), map[string]int64{"a": 300, "b": 40, "c": 9})
	// a: 200 in 2 s; b went back (an NF gone): 0; c new: no rate yet
	if r["a"] != 100 || r["b"] != 0 || len(r) != 2 {
		t.Fatalf("rates %v", r)
	}
	// too soon: the last rates again, the sample not taken
	if r := s.sample(7, t0.Add(2500*time.Millisecond), map[string]int64{"a": 10000}); r["a"] != 100 {
		t.Fatalf("early sample: %v", r)
	}
	if r := s.sample(7, t0.Add(3*time.Second), map[string]int64{"a": 350, "c": 19}); r["a"] != 50 || r["c"] != 10 {
		t.Fatalf("rates %v", r)
	}
	// a new manager: afresh
	if r := s.sample(8, t0.Add(4*time.Second), map[string]int64{"a": 5}); len(r) != 0 {
		t.Fatalf("new manager: %v", r)
	}
}

func TestServicesRingFill(t *testing.T) {
	got := services([]ctlNF{
		{Service: 2, Rx: 10, InputFill: 1, Drops: map[string]int64{"nf": 1, "stalled": 2}},
		{Service: 2, Rx: 5},
		{Service: 1, InputFill: 0.01},
		{Service: 1, InputFill: 7}, // not 0..1: bounded
	})
	if len(got) != 2 || got[0].ID != 1 || got[1].ID != 2 {
		t.Fatalf("services %+v", got)
	}
	if got[1].NFs != 2 || got[1].Rx != 15 || got[1].Drops != 3 || got[1].RingOccupancyPercent != 50 {
		t.Fatalf("service 2: %+v", got[1])
	}
	if got[0].RingOccupancyPercent != 51 { // (1 % + 100 %) / 2, rounded
		t.Fatalf("service 1: %+v", got[0])
	}
}
