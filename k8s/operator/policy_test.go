package operator

import (
	"testing"
	"time"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

func TestAutoscaleStep(t *testing.T) {
	a := &zv1.Autoscale{MinReplicas: i32(1), MaxReplicas: 3,
		ScaleOut: zv1.ScaleOut{RingOccupancyPercent: i32(50), IngressDropsPerSecond: i64(1000), ForSeconds: 2},
		ScaleIn:  zv1.ScaleIn{RingOccupancyPercentBelow: 5, ForSeconds: 4}}
	t0 := time.Unix(5000, 0)
	var prev *zv1.AutoscaleStatus
	type step struct {
		at                  int // seconds after t0
		occ                 int32
		drops               int64
		replicas, registerd int32
		want                int32
		pressure            string
	}
	for i, s := range []step{
		{0, 60, 0, 1, 1, 1, "Out"},    // out starts holding
		{1, 70, 0, 1, 1, 1, "Out"},    // 1 s: not yet
		{2, 10, 2000, 1, 1, 2, "Out"}, // 2 s (by drops now): out, the hold starts again
		{3, 90, 0, 2, 1, 2, "Out"},    // the new replica not registered
		{4, 90, 0, 2, 1, 2, "Out"},    // held 2 s, but still not registered
		{5, 90, 0, 2, 2, 3, "Out"},    // registered: out
		{8, 90, 0, 3, 3, 3, "Out"},    // at max
		{9, 20, 0, 3, 3, 3, ""},       // neither
		{10, 5, 0, 3, 3, 3, "In"},     // in starts holding
		{14, 0, 0, 3, 3, 2, "In"},     // 4 s: in
		{18, 0, 0, 2, 2, 1, "In"},     // again
		{30, 0, 0, 1, 1, 1, "In"},     // at min
		{31, 0, 0, 0, 0, 1, "In"},     // below min (kubectl scale): at once
		{32, 0, 0, 7, 7, 3, "In"},     // above max: at once
	} {
		st, want, why := autoscaleStep(a, prev, s.occ, s.drops, s.replicas, s.registerd,
			t0.Add(time.Duration(s.at)*time.Second))
		if want != s.want || st.Pressure != s.pressure {
			t.Fatalf("step %d %+v: replicas %d pressure %q (%s), want %d %q", i, s, want,
				st.Pressure, why, s.want, s.pressure)
		}
		if st.RingOccupancyPercent != s.occ || st.IngressDropsPerSecond != s.drops {
			t.Fatalf("step %d: status %+v", i, st)
		}
		if (want != s.replicas) != (st.LastScaleTime != nil && st.LastScaleTime.Time.Equal(
			t0.Add(time.Duration(s.at)*time.Second))) {
			t.Fatalf("step %d: last scale time %v", i, st.LastScaleTime)
		}
		prev = st
	}
}

func TestReactionStep(t *testing.T) {
	r := &zv1.Reaction{Name: "syn", When: zv1.ReactionWhen{Above: 100, ForSeconds: 2},
		Insert: zv1.ReactionInsert{RemoveAfterSeconds: 3}}
	t0 := time.Unix(7000, 0)
	var last *zv1.ReactionStatus
	for i, s := range []struct {
		at             int
		rate           int64
		active, change bool
	}{
		{0, 500, false, false}, // above: holding
		{1, 50, false, false},  // below: the hold ends
		{2, 500, false, false}, // holding again
		{3, 500, false, false},
		{4, 101, true, true},   // 2 s above: in
		{5, 100, true, false},  // at or below: holding to go out
		{7, 90, true, false},   // 2 s
		{8, 1000, true, false}, // above again: the hold ends
		{9, 0, true, false},
		{12, 0, false, true}, // 3 s: out
		{13, 0, false, false},
	} {
		st, changed := reactionStep(r, last, s.rate, t0.Add(time.Duration(s.at)*time.Second))
		if st.Active != s.active || changed != s.change || st.Rate != s.rate || st.Name != "syn" {
			t.Fatalf("step %d %+v: %+v changed %v", i, s, st, changed)
		}
		if changed && (st.LastTransitionTime == nil || st.Since != nil) {
			t.Fatalf("step %d: %+v", i, st)
		}
		last = &st
	}
}
