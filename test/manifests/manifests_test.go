// Package manifests tests the deployable manifests of config/: what
// `kubectl kustomize` renders from them must be accepted by a real API server
// (envtest's), so that a broken manifest fails CI instead of a user's deploy.
package manifests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
	"github.com/servicewatch/servicewatch/test/internal/objects"
)

// TestManifests starts one control plane for all of its subtests: starting
// kube-apiserver and etcd takes seconds, and the subtests only add objects
// in the operator's namespace that the others tolerate.
func TestManifests(t *testing.T) {
	s := suite{env: testenv.StartForTest(t)}
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"config/default renders what the operator needs", s.defaultRendersWhatTheOperatorNeeds},
		{"manifests apply with server-side dry-run", s.manifestsApplyWithServerSideDryRun},
		{"dry-run rejects broken manifests", s.dryRunRejectsBrokenManifests},
		{"manager pod passes restricted Pod Security", s.managerPodPassesRestrictedPodSecurity},
		{"manager Deployment", s.managerDeployment},
		{"make install and deploy", s.makeInstallAndDeploy},
		{"kubectl explain and get", s.kubectlExplainAndGet},
	} {
		t.Run(tc.name, tc.run)
	}
}

// suite holds the control plane the subtests of TestManifests share.
type suite struct {
	env *testenv.Env
}

const systemNamespace = "servicewatch-system"

// render runs `kubectl kustomize` on a directory of config/, as `make deploy`
// does, and decodes every object it prints.
func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	out := kubectl(t, "kustomize", filepath.Join(testenv.RepoRoot(), "config", dir))
	objs, err := objects.Decode(out)
	if err != nil {
		t.Fatalf("decoding `kubectl kustomize config/%s`: %v", dir, err)
	}
	if len(objs) == 0 {
		t.Fatalf("`kubectl kustomize config/%s` rendered nothing", dir)
	}
	return objs
}

func kubectl(t *testing.T, args ...string) []byte {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is not on PATH; it is needed to render config/ with kustomize (the README lists it as a prerequisite)")
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), path, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// ensureNamespace creates a namespace for real: a dry-run namespace does not
// exist for the objects that go in it.
func (s suite) ensureNamespace(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	err := s.env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
		client.FieldOwner("manifests-test"), client.ForceOwnership)
	if err != nil {
		t.Fatalf("creating %s: %v", objects.ID(u), err)
	}
}

func (s suite) dryRunApply(u *unstructured.Unstructured) error {
	return s.env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
		client.DryRunAll, client.FieldOwner("manifests-test"), client.ForceOwnership)
}

// defaultRendersWhatTheOperatorNeeds checks that config/default holds
// every object a deploy needs, in the operator's namespace.
func (s suite) defaultRendersWhatTheOperatorNeeds(t *testing.T) {
	objs := render(t, "default")
	var got []string
	for _, u := range objs {
		got = append(got, objects.ID(u))
	}
	want := []string{
		"Namespace/" + systemNamespace,
		"CustomResourceDefinition/servicewatches.cloud.servicewatch.io",
		"CustomResourceDefinition/clustercloudaccounts.cloud.servicewatch.io",
		"ServiceAccount/" + systemNamespace + "/servicewatch-controller-manager",
		// The accounts' Secrets, read in the operator's namespace only.
		"Role/" + systemNamespace + "/servicewatch-account-secrets-role",
		"RoleBinding/" + systemNamespace + "/servicewatch-account-secrets-rolebinding",
		"ClusterRole/servicewatch-manager-role",
		"ClusterRoleBinding/servicewatch-manager-rolebinding",
		"Role/" + systemNamespace + "/servicewatch-leader-election-role",
		"RoleBinding/" + systemNamespace + "/servicewatch-leader-election-rolebinding",
		"ClusterRole/servicewatch-editor-role",
		"ClusterRole/servicewatch-viewer-role",
		"ClusterRole/servicewatch-metrics-auth-role",
		"ClusterRoleBinding/servicewatch-metrics-auth-rolebinding",
		"ClusterRole/servicewatch-metrics-reader",
		"Service/" + systemNamespace + "/servicewatch-controller-manager-metrics-service",
		"Deployment/" + systemNamespace + "/servicewatch-controller-manager",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("config/default renders\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// manifestsApplyWithServerSideDryRun applies every rendered object to the
// API server with server-side dry-run: schema, CEL rules and admission all
// run, nothing is stored.
func (s suite) manifestsApplyWithServerSideDryRun(t *testing.T) {
	for _, dir := range []string{"default", "crd", "samples", "samples/account"} {
		t.Run(dir, func(t *testing.T) {
			objs := render(t, dir)
			for _, u := range objs {
				if u.GetKind() == "Namespace" {
					s.ensureNamespace(t, u)
				}
			}
			for _, u := range objs {
				if u.GetNamespace() == "" && s.isNamespaced(t, u) {
					// config/samples leaves the namespace to
					// the user (kubectl -n); use the operator's.
					u.SetNamespace(systemNamespace)
				}
				if err := s.dryRunApply(u); err != nil {
					t.Errorf("%s: %v", objects.ID(u), err)
				}
			}
		})
	}
}

func (s suite) isNamespaced(t *testing.T, u *unstructured.Unstructured) bool {
	t.Helper()
	namespaced, err := s.env.Client.IsObjectNamespaced(u)
	if err != nil {
		t.Fatalf("%s: %v", objects.ID(u), err)
	}
	return namespaced
}

// dryRunRejectsBrokenManifests shows that the dry-run above can fail: the
// API server rejects what a typo or a bad value makes of the rendered objects.
func (s suite) dryRunRejectsBrokenManifests(t *testing.T) {
	objs := append(render(t, "default"), render(t, "samples")...)
	find := func(kind string) *unstructured.Unstructured {
		for _, u := range objs {
			if u.GetKind() == kind {
				u = u.DeepCopy()
				if u.GetNamespace() == "" {
					u.SetNamespace(systemNamespace)
				}
				return u
			}
		}
		t.Fatalf("no %s rendered", kind)
		return nil
	}
	s.ensureNamespace(t, find("Namespace"))
	tests := []struct {
		name    string
		kind    string
		breakIt func(t *testing.T, u *unstructured.Unstructured)
		want    string
	}{{
		name: "misspelled Deployment field",
		kind: "Deployment",
		breakIt: func(t *testing.T, u *unstructured.Unstructured) {
			setInFirstItem(t, u, "imagePullPolice", "Always", "spec", "template", "spec", "containers")
		},
		want: "imagePullPolice",
	}, {
		name: "Service port out of range",
		kind: "Service",
		breakIt: func(t *testing.T, u *unstructured.Unstructured) {
			setInFirstItem(t, u, "port", int64(70000), "spec", "ports")
		},
		want: "70000",
	}, {
		name: "ServiceWatch interval under 30s",
		kind: "ServiceWatch",
		breakIt: func(t *testing.T, u *unstructured.Unstructured) {
			if err := unstructured.SetNestedField(u.Object, "10s", "spec", "interval"); err != nil {
				t.Fatal(err)
			}
		},
		want: "interval must be at least 30s",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := find(tt.kind)
			tt.breakIt(t, u)
			err := s.dryRunApply(u)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("dry-run of a %s: error %v, want one mentioning %q", tt.name, err, tt.want)
			}
		})
	}
}

// setInFirstItem sets field to value in the first object of the list at
// path, failing the test when u has no such list.
func setInFirstItem(t *testing.T, u *unstructured.Unstructured, field string, value any, path ...string) {
	t.Helper()
	items, found, err := unstructured.NestedSlice(u.Object, path...)
	if err != nil || !found || len(items) == 0 {
		t.Fatalf("%s has no list at %v (%v)", objects.ID(u), path, err)
	}
	item, ok := items[0].(map[string]any)
	if !ok {
		t.Fatalf("%s: the first item at %v is %T, not an object", objects.ID(u), path, items[0])
	}
	item[field] = value
	if err := unstructured.SetNestedSlice(u.Object, items, path...); err != nil {
		t.Fatal(err)
	}
}

// renderedDeployment returns the manager's Deployment of config/default.
func renderedDeployment(t *testing.T) (*appsv1.Deployment, []*unstructured.Unstructured) {
	t.Helper()
	objs := render(t, "default")
	for _, u := range objs {
		if u.GetKind() == "Deployment" {
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &d, true); err != nil {
				t.Fatal(err)
			}
			return &d, objs
		}
	}
	t.Fatal("config/default renders no Deployment")
	return nil, nil
}

// managerPodPassesRestrictedPodSecurity creates, with dry-run, a Pod from
// the Deployment's template in the operator's namespace, whose label enforces
// the restricted Pod Security Standard; a Pod that breaks it is rejected, so
// the admission really runs.
func (s suite) managerPodPassesRestrictedPodSecurity(t *testing.T) {
	d, objs := renderedDeployment(t)
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			if u.GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
				t.Errorf("namespace %s does not enforce the restricted Pod Security Standard: labels %v", u.GetName(), u.GetLabels())
			}
			s.ensureNamespace(t, u)
		}
	}
	pod := func(mutate func(*corev1.PodSpec)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "manager-", Namespace: d.Namespace, Labels: d.Spec.Template.Labels},
			Spec:       *d.Spec.Template.Spec.DeepCopy(),
		}
		mutate(&p.Spec)
		return p
	}
	tests := []struct {
		name    string
		mutate  func(*corev1.PodSpec)
		allowed bool
	}{
		{"as rendered", func(*corev1.PodSpec) {}, true},
		{"privilege escalation allowed", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.AllowPrivilegeEscalation = new(true)
		}, false},
		{"capabilities not dropped", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Capabilities = nil
		}, false},
		{"no seccomp profile", func(s *corev1.PodSpec) {
			s.SecurityContext.SeccompProfile = nil
			s.Containers[0].SecurityContext.SeccompProfile = nil
		}, false},
		{"may run as root", func(s *corev1.PodSpec) {
			s.SecurityContext.RunAsNonRoot = nil
			s.SecurityContext.RunAsUser = nil
			s.Containers[0].SecurityContext.RunAsNonRoot = nil
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.env.Client.Create(context.Background(), pod(tt.mutate), client.DryRunAll)
			switch {
			case tt.allowed && err != nil:
				t.Errorf("the manager's pod is rejected: %v", err)
			case !tt.allowed && (err == nil || !strings.Contains(err.Error(), "violates PodSecurity")):
				t.Errorf("a pod with %s: error %v, want a PodSecurity violation", tt.name, err)
			}
		})
	}
}

// managerDeployment checks what the issue asks of the Deployment beyond
// what the API server validates.
func (s suite) managerDeployment(t *testing.T) {
	d, objs := renderedDeployment(t)
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	sc := c.SecurityContext
	checks := []struct {
		what string
		ok   bool
	}{
		{"leader election on (--leader-elect)", slices.Contains(c.Args, "--leader-elect")},
		{"image servicewatch:dev by default", c.Image == "servicewatch:dev"},
		{"read-only root filesystem", sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem},
		{"no privilege escalation", sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation},
		{"all capabilities dropped", sc != nil && sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"})},
		{"non-root", spec.SecurityContext != nil && spec.SecurityContext.RunAsNonRoot != nil && *spec.SecurityContext.RunAsNonRoot},
		{"seccomp RuntimeDefault", spec.SecurityContext != nil && spec.SecurityContext.SeccompProfile != nil &&
			spec.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"CPU and memory requests", !c.Resources.Requests.Cpu().IsZero() && !c.Resources.Requests.Memory().IsZero()},
		{"CPU and memory limits", !c.Resources.Limits.Cpu().IsZero() && !c.Resources.Limits.Memory().IsZero()},
		{"liveness probe on /healthz", c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path == "/healthz"},
		{"readiness probe on /readyz", c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path == "/readyz"},
		{"probes on the port of --health-probe-bind-address", c.LivenessProbe != nil && portNumber(c, c.LivenessProbe.HTTPGet.Port.String()) == 8081 &&
			slices.Contains(c.Args, "--health-probe-bind-address=:8081")},
		{"metrics on the port of --metrics-bind-address", portNumber(c, "metrics") == 8443 && slices.Contains(c.Args, "--metrics-bind-address=:8443")},
		{"metrics served securely (no --metrics-secure=false)", !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--metrics-secure") })},
		{"no calls to loopback, link-local or metadata addresses (--deny-local-addresses)", slices.Contains(c.Args, "--deny-local-addresses")},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("manager Deployment: want %s", ch.what)
		}
	}

	// The references between the rendered objects hold after kustomize's
	// name prefix and namespace.
	byID := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		byID[objects.ID(u)] = u
	}
	if _, ok := byID["ServiceAccount/"+d.Namespace+"/"+spec.ServiceAccountName]; !ok {
		t.Errorf("the Deployment runs as ServiceAccount %q, which config/default does not create", spec.ServiceAccountName)
	}
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, u := range objs {
			if u.GetKind() != kind {
				continue
			}
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			roleKind, _, _ := unstructured.NestedString(u.Object, "roleRef", "kind")
			roleName, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
			roleID := roleKind + "/" + roleName
			if roleKind == "Role" {
				roleID = roleKind + "/" + u.GetNamespace() + "/" + roleName
			}
			if _, ok := byID[roleID]; !ok {
				t.Errorf("%s refers to %s, which config/default does not create", objects.ID(u), roleID)
			}
			for _, item := range subjects {
				subject, ok := item.(map[string]any)
				if !ok {
					t.Fatalf("%s has a subject %v that is not an object", objects.ID(u), item)
				}
				if subject["kind"] != "ServiceAccount" || subject["name"] != spec.ServiceAccountName || subject["namespace"] != d.Namespace {
					t.Errorf("%s binds %v, want the manager's ServiceAccount %s/%s", objects.ID(u), subject, d.Namespace, spec.ServiceAccountName)
				}
			}
		}
	}
	svc := byID["Service/"+d.Namespace+"/servicewatch-controller-manager-metrics-service"]
	if svc == nil {
		t.Fatal("no metrics Service")
	}
	selector, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	for k, v := range selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the metrics Service selects %s=%s, which the manager's pods do not carry (labels %v)", k, v, d.Spec.Template.Labels)
		}
	}
}

func portNumber(c corev1.Container, nameOrNumber string) int32 {
	for _, p := range c.Ports {
		if p.Name == nameOrNumber || fmt.Sprint(p.ContainerPort) == nameOrNumber {
			return p.ContainerPort
		}
	}
	return 0
}

// makeInstallAndDeploy runs `make install` and `make deploy IMG=...`
// against the envtest API server through a kubeconfig, as a user would
// against a cluster, and checks the image each IMG form yields.
func (s suite) makeInstallAndDeploy(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not on PATH")
	}
	kubeconfig := s.writeKubeconfig(t)
	// -o manifests: the committed CRD and role are what is deployed; the
	// test must not regenerate files under the feet of others.
	runMake := func(t *testing.T, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "make", append([]string{"--no-print-directory", "-o", "manifests"}, args...)...)
		cmd.Dir = testenv.RepoRoot()
		// As a user runs it: not as a sub-make of `make test`, whose flags
		// and jobserver would otherwise be inherited.
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
		}), "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	runMake(t, "install")
	tests := []struct {
		img, want string
	}{
		{"registry.example.com/team/servicewatch:v1.2.3", "registry.example.com/team/servicewatch:v1.2.3"},
		{"registry.example.com:5000/servicewatch", "registry.example.com:5000/servicewatch:latest"},
		{"servicewatch@sha256:" + strings.Repeat("ab", 32), "servicewatch@sha256:" + strings.Repeat("ab", 32)},
	}
	for _, tt := range tests {
		t.Run(tt.img, func(t *testing.T) {
			runMake(t, "deploy", "IMG="+tt.img)
			var d appsv1.Deployment
			key := client.ObjectKey{Namespace: systemNamespace, Name: "servicewatch-controller-manager"}
			if err := s.env.Client.Get(context.Background(), key, &d); err != nil {
				t.Fatal(err)
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != tt.want {
				t.Errorf("make deploy IMG=%s deployed image %s, want %s", tt.img, got, tt.want)
			}
		})
	}
}

func (s suite) writeKubeconfig(t *testing.T) string {
	t.Helper()
	cfg := s.env.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubectlExplainAndGet checks what a user reads with kubectl: the field
// docs of `kubectl explain`, down to nested status fields, and the columns
// of `kubectl get sw -o wide`.
func (s suite) kubectlExplainAndGet(t *testing.T) {
	kubeconfig := s.writeKubeconfig(t)
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	explained := map[string][]string{
		"servicewatch.spec.interval":                                      {"At least 30s"},
		"servicewatch.status.pipes.source.postgres.settings":              {"settings tune the replication", "syncIntervalSeconds", "replicationSlotName"},
		"servicewatch.status.pipes.scaling.replicaMemoryGb":               {"in gigabytes"},
		"servicewatch.status.pipes.source.objectStorage.connectionString": {"<redacted>"},
		"servicewatch.status.alerts.error":                                {"latest fetch"},
	}
	// The API server publishes a new CRD's OpenAPI schema a moment after the
	// CRD is established.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.CommandContext(t.Context(), "kubectl", "--kubeconfig", kubeconfig, "explain", "servicewatch").CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl explain servicewatch: %v\n%s", err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Both served versions document every field (one schema); kubectl
	// explains the stored one, v1beta1, by default.
	for field, wants := range explained {
		for _, version := range []string{"v1beta1", "v1alpha1"} {
			out := run("explain", field, "--api-version=cloud.servicewatch.io/"+version)
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Errorf("kubectl explain %s --api-version=%s does not say %q:\n%s", field, version, want, out)
				}
			}
		}
	}
	if out := run("explain", "servicewatch"); !strings.Contains(out, "VERSION:    v1beta1") && !strings.Contains(out, "VERSION:  v1beta1") {
		t.Errorf("kubectl explain servicewatch does not explain v1beta1 by default:\n%s", out)
	}

	sample := filepath.Join(testenv.RepoRoot(), "config", "samples", "cloud_v1beta1_servicewatch.yaml")
	run("create", "namespace", "explain-get")
	run("apply", "-n", "explain-get", "-f", sample)
	// Every name of the resource means it alone: a category of another
	// kind spelled like one of them (the account's "servicewatch" once)
	// makes kubectl get NAME fail with "you must specify only one resource".
	for _, name := range []string{"servicewatch", "servicewatches", "sw", "servicewatches.cloud.servicewatch.io"} {
		if got := strings.TrimSpace(run("get", name, "analytics-prod", "-n", "explain-get", "-o", "name")); got != "servicewatch.cloud.servicewatch.io/analytics-prod" {
			t.Errorf("kubectl get %s analytics-prod -o name = %q", name, got)
		}
	}
	for _, name := range []string{"clustercloudaccount", "clustercloudaccounts", "cca"} {
		run("get", name) // no account exists: an empty list, not an error
	}
	header := strings.Fields(strings.SplitN(run("get", "sw", "-n", "explain-get", "-o", "wide"), "\n", 2)[0])
	want := []string{"NAME", "READY", "REASON", "PIPES", "FAILED", "ENDPOINTS", "ALERTS", "LAST", "SYNC", "AGE", "SERVICE", "INTERVAL", "STATUS"}
	if !slices.Equal(header, want) {
		t.Errorf("kubectl get sw -o wide columns = %v, want %v", header, want)
	}

	// The columns a user reads first: why the watch is not Ready, how many
	// pipes failed, and Ready's message in full on -o wide.
	const refused = "the management API answered 401 Unauthorized"
	watch := &unstructured.Unstructured{}
	watch.SetAPIVersion("cloud.servicewatch.io/v1beta1")
	watch.SetKind("ServiceWatch")
	if err := s.env.Client.Get(t.Context(), client.ObjectKey{Namespace: "explain-get", Name: "analytics-prod"}, watch); err != nil {
		t.Fatal(err)
	}
	status := map[string]any{
		"summary": map[string]any{"pipes": int64(3), "pipesByState": map[string]any{"Running": int64(1), "Failed": int64(2)},
			"reversePrivateEndpoints": int64(1), "alerts": int64(0)},
		"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "Unauthorized", "message": refused,
			"lastTransitionTime": "2026-11-26T12:00:00Z"}},
	}
	if err := unstructured.SetNestedField(watch.Object, status, "status"); err != nil {
		t.Fatal(err)
	}
	if err := s.env.Client.Status().Update(t.Context(), watch); err != nil {
		t.Fatal(err)
	}
	row := strings.SplitN(run("get", "sw", "-n", "explain-get", "-o", "wide"), "\n", 3)[1]
	if fields := strings.Fields(row); len(fields) < 5 || !slices.Equal(fields[:5], []string{"analytics-prod", "False", "Unauthorized", "3", "2"}) {
		t.Errorf("kubectl get sw -o wide row %q, want it to start with the name, False, Unauthorized, 3 pipes and 2 failed", row)
	}
	if !strings.HasSuffix(row, refused) {
		t.Errorf("kubectl get sw -o wide row %q, want Ready's message %q at its end (Status)", row, refused)
	}
}

// TestNamespacedAndShardVariants checks what the kustomize variants change
// of config/default, without an API server.
func TestNamespacedAndShardVariants(t *testing.T) {
	namespaced := objects.ByID(render(t, "namespaced"))
	if namespaced["ClusterRoleBinding/servicewatch-manager-rolebinding"] != nil {
		t.Error("config/namespaced keeps the cluster-wide binding of the manager's role (Secrets in every namespace)")
	}
	for _, ns := range []string{"team-a", "team-b"} {
		rb := namespaced["RoleBinding/"+ns+"/servicewatch-manager-rolebinding"]
		if rb == nil {
			t.Errorf("config/namespaced binds nothing in %s", ns)
			continue
		}
		if ref, _, _ := unstructured.NestedString(rb.Object, "roleRef", "name"); namespaced["ClusterRole/"+ref] == nil {
			t.Errorf("%s binds %s, which config/namespaced does not create", objects.ID(rb), ref)
		}
	}
	args := managerArgs(t, namespaced["Deployment/"+systemNamespace+"/servicewatch-controller-manager"])
	// Accounts need cluster-wide reads of namespaces, which this variant
	// does not grant: it serves none.
	for _, want := range []string{"--watch-namespaces=team-a,team-b", "--account-namespace="} {
		if !slices.Contains(args, want) {
			t.Errorf("config/namespaced manager args %v lack %s", args, want)
		}
	}

	sharded := objects.ByID(render(t, "sharded"))
	d := sharded["Deployment/"+systemNamespace+"/servicewatch-controller-manager-shard-0"]
	args = managerArgs(t, d)
	for _, want := range []string{"--watch-label-selector=sharding.servicewatch.io/shard=shard-0", "--leader-election-id=shard-0.servicewatch.cloud.servicewatch.io"} {
		if !slices.Contains(args, want) {
			t.Errorf("config/sharded manager args %v lack %s", args, want)
		}
	}
	svc := sharded["Service/"+systemNamespace+"/servicewatch-controller-manager-metrics-service-shard-0"]
	if selector, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector"); selector["sharding.servicewatch.io/shard"] != "shard-0" {
		t.Errorf("config/sharded metrics Service selects %v, also other shards' pods", selector)
	}
}

func managerArgs(t *testing.T, deployment *unstructured.Unstructured) []string {
	t.Helper()
	if deployment == nil {
		t.Fatal("no manager Deployment rendered")
	}
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		t.Fatal("the manager Deployment has no container")
	}
	container, _ := containers[0].(map[string]any)
	raw, _ := container["args"].([]any)
	var args []string
	for _, a := range raw {
		s, ok := a.(string)
		if !ok {
			t.Fatalf("manager arg %v is not a string", a)
		}
		args = append(args, s)
	}
	return args
}
