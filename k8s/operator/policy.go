package operator

// The policies of a deployment file on the cluster (docs/kubernetes.md
// "Autoscaling and reactions"): a NetworkFunction's autoscale and a
// ServiceChain's reactions, decided here from the load the node agents
// report (ZeroNFNodeStatus: rates over their last sampling interval), as
// the manager decides a deployment file's (mgr/nf/policy.c) from its own.
// What is decided and since when is kept in the objects' status, so an
// operator restarted goes on where it was.

import (
	"math"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
)

// PolicyRecheck: how soon a policy whose condition holds is looked at
// again (its hold may end with no new report).
const PolicyRecheck = time.Second

// load is a service's, as the nodes report it.
type load struct {
	occ   int32 // its NFs' inputs' mean fill over the nodes (by their NFs)
	nfs   int32 // its NFs the managers registered
	drops int64 // ingress drops a second of the nodes it runs on
	rate  int64 // its NFs' counter a second (serviceLoad's counter)
}

// serviceLoad: service svc's load, the rate of counter ("": none).
func serviceLoad(nodes []zv1.ZeroNFNode, svc int32, counter string) load {
	var l load
	var fill float64
	for _, n := range nodes {
		for _, s := range n.Status.Services {
			if s.ID != svc {
				continue
			}
			if s.NFs > 0 {
				fill += float64(s.RingOccupancyPercent) * float64(s.NFs)
				l.nfs += s.NFs
				l.drops += n.Status.IngressDropsPerSecond
			}
			l.rate += s.CounterRates[counter]
		}
	}
	if l.nfs > 0 {
		l.occ = int32(math.Round(fill / float64(l.nfs)))
	}
	return l
}

// held: whether a condition now true (since since) has held for sec
// seconds.
func held(since *metav1.Time, now time.Time, sec int32) bool {
	return since != nil && now.Sub(since.Time) >= time.Duration(sec)*time.Second
}

// autoscaleStep: the autoscale status and replicas that follow from the
// last status, the load (occ, drops) and the replicas wanted now (spec)
// and registered (the managers'). Out: either threshold reached; in: no
// drops at the out threshold and the rings at or below the in one. A
// replica is added only once every replica wanted is registered (one
// that cannot start is no capacity to wait on), and each step starts
// the hold again. Replicas outside min..max are brought in at once.
func autoscaleStep(a *zv1.Autoscale, last *zv1.AutoscaleStatus, occ int32, drops int64,
	replicas, registered int32, now time.Time) (*zv1.AutoscaleStatus, int32, string) {
	st := &zv1.AutoscaleStatus{RingOccupancyPercent: occ, IngressDropsPerSecond: drops}
	if last != nil {
		st.Pressure, st.Since, st.LastScaleTime = last.Pressure, last.Since, last.LastScaleTime
	}
	lo := int32(1)
	if a.MinReplicas != nil {
		lo = *a.MinReplicas
	}
	o := a.ScaleOut
	dropsOut := o.IngressDropsPerSecond != nil && drops >= *o.IngressDropsPerSecond
	out := (o.RingOccupancyPercent != nil && occ >= *o.RingOccupancyPercent) || dropsOut
	in := !out && occ <= a.ScaleIn.RingOccupancyPercentBelow
	pressure := ""
	switch {
	case out:
		pressure = "Out"
	case in:
		pressure = "In"
	}
	t := metav1.NewTime(now).Rfc3339Copy()
	if pressure != st.Pressure || (pressure != "" && st.Since == nil) {
		st.Pressure, st.Since = pressure, &t
	}
	if pressure == "" {
		st.Since = nil
	}
	want, why := replicas, ""
	switch {
	case replicas < lo:
		want, why = lo, "below minReplicas"
	case replicas > a.MaxReplicas:
		want, why = a.MaxReplicas, "above maxReplicas"
	case pressure == "Out" && held(st.Since, now, o.ForSeconds) && replicas < a.MaxReplicas &&
		registered >= replicas:
		want = replicas + 1
		why = "RX rings " + strconv.Itoa(int(occ)) + "% full, " + strconv.FormatInt(drops, 10) + " ingress drops/s"
	case pressure == "In" && held(st.Since, now, a.ScaleIn.ForSeconds) && replicas > lo:
		want = replicas - 1
		why = "RX rings " + strconv.Itoa(int(occ)) + "% full for " + strconv.Itoa(int(a.ScaleIn.ForSeconds)) + " s"
	}
	if want != replicas {
		st.LastScaleTime = &t
		if st.Pressure != "" {
			st.Since = &t
		}
	}
	return st, want, why
}

// reactionStep: a reaction's status that follows from its last one and
// the counter's rate now; changed: it went in or out.
func reactionStep(r *zv1.Reaction, last *zv1.ReactionStatus, rate int64, now time.Time) (st zv1.ReactionStatus, changed bool) {
	st = zv1.ReactionStatus{Name: r.Name, Rate: rate}
	if last != nil {
		st.Active, st.Since, st.LastTransitionTime = last.Active, last.Since, last.LastTransitionTime
	}
	// the condition that ends the present state: above while out, at or
	// below while in
	cond, hold := rate > r.When.Above, r.When.ForSeconds
	if st.Active {
		cond, hold = rate <= r.When.Above, r.Insert.RemoveAfterSeconds
	}
	if !cond {
		st.Since = nil
		return st, false
	}
	if st.Since == nil {
		t := metav1.NewTime(now).Rfc3339Copy()
		st.Since = &t
	}
	if !held(st.Since, now, hold) {
		return st, false
	}
	t := metav1.NewTime(now).Rfc3339Copy()
	st.Active, st.Since, st.LastTransitionTime = !st.Active, nil, &t
	return st, true
}
