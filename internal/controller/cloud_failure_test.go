package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

func TestCloudFailure(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		reason     string
		stalled    bool
		mention    string
		retryAfter time.Duration
	}{
		{"401 stalls and says where the key is", &cloudapi.Error{Reason: cloudapi.ReasonUnauthorized, Operation: cloudapi.OperationListPipes}, swv1.ReasonUnauthorized, true, "check the key or token", 0},
		{"403 stalls", &cloudapi.Error{Reason: cloudapi.ReasonForbidden, Operation: cloudapi.OperationListPipes}, swv1.ReasonForbidden, true, "lacks permission", 0},
		{"404 of an alert names spec.alertIds", &cloudapi.Error{Reason: cloudapi.ReasonNotFound, Operation: cloudapi.OperationGetAlert}, swv1.ReasonNotFound, false, "spec.alertIds", 0},
		{"404 of a list names the service", &cloudapi.Error{Reason: cloudapi.ReasonNotFound, Operation: cloudapi.OperationListPipes}, swv1.ReasonNotFound, false, "spec.serviceId", 0},
		{"429 keeps its Retry-After", &cloudapi.Error{Reason: cloudapi.ReasonRateLimited, RetryAfter: time.Minute}, swv1.ReasonRateLimited, false, "", time.Minute},
		{"5xx is retried", &cloudapi.Error{Reason: cloudapi.ReasonServerError}, swv1.ReasonServerError, false, "", 0},
		{"503 keeps its Retry-After", &cloudapi.Error{Reason: cloudapi.ReasonServerError, StatusCode: 503, RetryAfter: time.Minute}, swv1.ReasonServerError, false, "(retry after 1m0s)", time.Minute},
		{"a redirect says where to and which URL to set", &cloudapi.Error{Reason: cloudapi.ReasonUnexpectedStatus, StatusCode: 308, Location: "https://new.example/v1/organizations/o", Operation: cloudapi.OperationListPipes},
			swv1.ReasonUnexpectedStatus, false, "(redirect to https://new.example/v1/organizations/o not followed); if the management API moved, set spec.managementApi.url", 0},
		{"a redirect of the alert API names its URL", &cloudapi.Error{Reason: cloudapi.ReasonUnexpectedStatus, StatusCode: 301, Location: "https://a.example/api/v2/alerts/x", Operation: cloudapi.OperationGetAlert},
			swv1.ReasonUnexpectedStatus, false, "set spec.alertApi.url", 0},
		{"a bad answer is retried", &cloudapi.Error{Reason: cloudapi.ReasonInvalidResponse}, swv1.ReasonInvalidResponse, false, "", 0},
		{"an answer too costly to decode is retried at the interval", &cloudapi.Error{Reason: cloudapi.ReasonDecodeBudgetExceeded, Operation: cloudapi.OperationListPipes, Err: errors.New("decode work budget exceeded")}, swv1.ReasonDecodeBudgetExceeded, false, "decode work budget exceeded", 0},
		{"a configuration error stalls", &cloudapi.Error{Reason: cloudapi.ReasonConfigurationError}, swv1.ReasonConfigurationError, true, "", 0},
		{"a refused address stalls and names the flag", &cloudapi.Error{Reason: cloudapi.ReasonAddressNotAllowed}, swv1.ReasonAddressNotAllowed, true, "--deny-local-addresses", 0},
		{"a 424 of a stopped service is retried at the interval, with its state", &cloudapi.Error{Reason: cloudapi.ReasonServiceNotRunning, ServiceState: "stopped", Operation: cloudapi.OperationListPipes}, swv1.ReasonServiceNotRunning, false, "not running (stopped)", 0},
		{"a 404 page that is not the API's names the management URL", &cloudapi.Error{Reason: cloudapi.ReasonEndpointNotFound, Operation: cloudapi.OperationListPipes}, swv1.ReasonEndpointNotFound, true, "spec.managementApi.url", 0},
		{"a 404 page that is not the API's names the alert URL", &cloudapi.Error{Reason: cloudapi.ReasonEndpointNotFound, Operation: cloudapi.OperationGetAlert}, swv1.ReasonEndpointNotFound, true, "spec.alertApi.url", 0},
		{"a 400 for an alert ID stalls with the cloud's words", &cloudapi.Error{Reason: cloudapi.ReasonBadRequest, StatusCode: 400, Message: "Params validation failed: id: Invalid ObjectId", Operation: cloudapi.OperationGetAlert}, swv1.ReasonBadRequest, true, "Params validation failed: id: Invalid ObjectId", 0},
		{"an error the client did not classify is Unreachable", errors.New("dial tcp: refused"), swv1.ReasonUnreachable, false, "refused", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := cloudFailure(tt.err)
			if f.reason != tt.reason || isStalledReason(f.reason) != tt.stalled || f.retryAfter != tt.retryAfter {
				t.Errorf("cloudFailure = %+v (stalled %v), want reason %s, stalled %v, retryAfter %v", f, isStalledReason(f.reason), tt.reason, tt.stalled, tt.retryAfter)
			}
			if !strings.Contains(f.message, tt.mention) {
				t.Errorf("message %q does not mention %q", f.message, tt.mention)
			}
			if transient := isTransientReason(f.reason); (tt.reason == swv1.ReasonServiceNotRunning || tt.reason == swv1.ReasonDecodeBudgetExceeded) && transient {
				t.Errorf("%s backs off; want it retried at the interval like ServiceIdle", f.reason)
			}
		})
	}
}
