//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// TestChangeSink installs the chart with the change sink pointed at a
// CloudEvents receiver Pod (hack/e2e/probe's receive, built with the
// CloudEvents Go SDK) behind a Service, as docs/operations.md shows, makes
// a pipe fail in the fake cloud, and sees the change arrive as a CloudEvent
// in the receiver's log.
func TestChangeSink(t *testing.T) {
	const (
		dataNS     = "e2e-sink-data"
		receiverNS = "e2e-sink-receiver"
		watch      = "analytics-prod"
	)
	cloud := deployFakeCloud(t, "e2e-cloud-sink")
	restrictedNamespace(t, systemNamespace)
	restrictedNamespace(t, dataNS)
	restrictedNamespace(t, receiverNS)
	dumpOnFailure(t, systemNamespace, dataNS, receiverNS)
	receiverURL := deployReceiver(t, receiverNS)

	installed := false
	cleanup(t, "helm uninstall and deleting the CRD", func() error {
		if installed {
			if _, err := helmErr("uninstall", "servicewatch", "-n", systemNamespace, "--wait"); err != nil {
				return err
			}
		}
		_, err := kubectlErr(t, "", "delete", "crd", "servicewatches.cloud.servicewatch.io", "clustercloudaccounts.cloud.servicewatch.io", "--ignore-not-found", "--wait=true")
		return err
	})
	helm(t, "install", "servicewatch", "charts/servicewatch", "-n", systemNamespace,
		"--set", "image.repository=servicewatch", "--set", "image.tag=dev",
		"--set", "changeSink.url="+receiverURL, "--wait", "--timeout", "3m")
	installed = true
	sampleWatch(t, dataNS, watch, cloud, nil)
	waitReady(t, dataNS, watch, 2*time.Minute)

	// The object-storage pipe fails; a requested sync sees it.
	d := fakecloud.DefaultData()
	svc := d.Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID]
	for _, p := range svc.Pipes {
		if p["id"] == fakecloud.ObjectStoragePipeID {
			p["state"] = "Failed"
		}
	}
	cloud.setData(t, d)
	kubectl(t, "annotate", "sw", "-n", dataNS, watch, "--overwrite", "servicewatch.io/requested-at=sink-"+time.Now().Format(time.RFC3339Nano))

	wantSource := "/apis/cloud.servicewatch.io/namespaces/" + dataNS + "/servicewatches/" + watch
	wantSubject := "Pipe/" + fakecloud.ObjectStoragePipeID
	var got cloudevents.Event
	eventually(t, 2*time.Minute, "the pipe's change received as a CloudEvent", func() error {
		for _, e := range receivedEvents(t, receiverNS) {
			if e.Source() == wantSource && e.Subject() == wantSubject {
				got = e
				return nil
			}
		}
		return fmt.Errorf("no event with source %s and subject %s in the receiver's log", wantSource, wantSubject)
	})
	var data struct {
		Kind, ID, Name, From, To string
		Worse                    bool
	}
	if err := got.DataAs(&data); err != nil {
		t.Fatal(err)
	}
	if got.Type() != "io.servicewatch.item.statechanged.v1" || got.ID() == "" || got.Time().IsZero() ||
		data.From != "Running" || data.To != "Failed" || data.Kind != "Pipe" || data.ID != fakecloud.ObjectStoragePipeID {
		t.Errorf("the change's event: %s", got)
	}
	ext := got.Extensions()
	if ext["namespace"] != dataNS || ext["servicewatch"] != watch || ext["itemkind"] != "Pipe" || ext["itemid"] != fakecloud.ObjectStoragePipeID {
		t.Errorf("the change's event's extensions: %v", ext)
	}
	log := kubectl(t, "logs", "-n", receiverNS, "receiver")
	for _, secret := range []string{fakecloud.FakeConnectionString, fakecloud.DefaultKeySecret, fakecloud.DefaultAlertToken} {
		if strings.Contains(log, secret) {
			t.Errorf("the receiver received %q", secret)
		}
	}
}

// deployReceiver runs the CloudEvents receiver as Pod "receiver" behind a
// Service of the same name in ns, and returns the URL the sink is given:
// the Service's ClusterIP (the cluster has no DNS), which the manager's dial
// guard lets through as it does any in-cluster Service.
func deployReceiver(t *testing.T, ns string) string {
	t.Helper()
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: receiver
  namespace: %[1]s
  labels: {app: receiver}
spec:
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: receiver
    image: %[2]s
    imagePullPolicy: Never
    command: [/probe]
    args: [receive, --listen=0.0.0.0:8080]
    ports:
    - {name: http, containerPort: 8080}
    readinessProbe:
      tcpSocket: {port: http}
      periodSeconds: 1
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL]}
---
apiVersion: v1
kind: Service
metadata:
  name: receiver
  namespace: %[1]s
spec:
  selector: {app: receiver}
  ports:
  - {name: http, port: 8080, targetPort: http}
`, ns, fakeCloudImage))
	kubectl(t, "wait", "-n", ns, "pod/receiver", "--for=condition=Ready", "--timeout=2m")
	ip := strings.TrimSpace(kubectl(t, "get", "service", "-n", ns, "receiver", "-o", "jsonpath={.spec.clusterIP}"))
	return "http://" + ip + ":8080/"
}

// receivedEvents reads the events the receiver printed, one JSON line each.
func receivedEvents(t *testing.T, ns string) []cloudevents.Event {
	t.Helper()
	var events []cloudevents.Event
	for line := range strings.SplitSeq(kubectl(t, "logs", "-n", ns, "receiver"), "\n") {
		var e cloudevents.Event
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &e) == nil && e.ID() != "" {
			events = append(events, e)
		}
	}
	return events
}
