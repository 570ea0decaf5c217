// Command zeronf-operator reconciles ZeroNF's custom resources
// (k8s/api/v1alpha1) on a cluster (docs/kubernetes.md). In a pod it uses
// its service account; else $KUBECONFIG.
package main

import (
	"context"
	"flag"
	"net/http"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	zv1 "zeronf.dev/k8s/api/v1alpha1"
	"zeronf.dev/k8s/operator"
)

func main() {
	image := flag.String("image", os.Getenv("ZERONF_IMAGE"), "NF pods' image when a NetworkFunction names none")
	dashImage := flag.String("dashboard-image", os.Getenv("ZERONF_DASHBOARD_IMAGE"), "the dashboard's image when the ZeroNF names none")
	namespace := flag.String("namespace", envOr("POD_NAMESPACE", "zeronf-system"), "where the node agents' DaemonSet goes (the operator's namespace)")
	probe := flag.String("health-probe-bind-address", ":8081", "healthz and readyz")
	metrics := flag.String("metrics-bind-address", "0", "Prometheus metrics (0: off)")
	sd := flag.String("targets-address", ":8082", "Prometheus' HTTP service discovery of the node agents' metrics, at "+operator.TargetsPath+" (empty: off)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("zeronf-operator")

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		log.Error(err, "scheme")
		os.Exit(1)
	}
	if err := zv1.AddToScheme(scheme); err != nil {
		log.Error(err, "scheme")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Client:                 operator.ClientOptions(),
		Metrics:                metricsserver.Options{BindAddress: *metrics},
		HealthProbeBindAddress: *probe,
	})
	if err != nil {
		log.Error(err, "manager")
		os.Exit(1)
	}
	if *image == "" {
		log.Info("no -image (or ZERONF_IMAGE): every NetworkFunction must name its image")
	}
	if err := (&operator.NetworkFunctionReconciler{
		Client: mgr.GetClient(), Scheme: scheme, Image: *image,
		Recorder: mgr.GetEventRecorderFor("zeronf-operator"),
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "NetworkFunction controller")
		os.Exit(1)
	}
	if err := (&operator.ZeroNFReconciler{
		Client: mgr.GetClient(), Scheme: scheme, Image: *image, Namespace: *namespace,
		DashboardImage: *dashImage,
		Recorder:       mgr.GetEventRecorderFor("zeronf-operator"),
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "ZeroNF controller")
		os.Exit(1)
	}
	if err := (&operator.ServiceChainReconciler{Client: mgr.GetClient(),
		Recorder:  mgr.GetEventRecorderFor("zeronf-operator"),
		APIReader: mgr.GetAPIReader(),
	}).SetupWithManager(mgr); err != nil {
		log.Error(err, "ServiceChain controller")
		os.Exit(1)
	}
	if *sd != "" {
		mux := http.NewServeMux()
		mux.Handle(operator.TargetsPath, &operator.Targets{Reader: mgr.GetClient()})
		srv := &http.Server{Addr: *sd, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			go func() { <-ctx.Done(); _ = srv.Close() }()
			if err := srv.ListenAndServe(); err != http.ErrServerClosed {
				return err
			}
			return nil
		})); err != nil {
			log.Error(err, "targets")
			os.Exit(1)
		}
	}
	_ = mgr.AddHealthzCheck("healthz", healthz.Ping)
	_ = mgr.AddReadyzCheck("readyz", healthz.Ping)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "stopped")
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
