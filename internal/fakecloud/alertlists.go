package fakecloud

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/google/uuid"
)

// The operations of the alert routes issue 29 added: the alert API's list,
// and the management API's alerts of a service (one, and the list).
const (
	OpListAlerts        Operation = "list_alerts"
	OpGetServiceAlert   Operation = "get_service_alert"
	OpListServiceAlerts Operation = "list_service_alerts"
)

// Operations returns every operation the fake serves.
func Operations() []Operation {
	return []Operation{OpListPipes, OpListReversePrivateEndpoints, OpGetAlert, OpListAlerts, OpGetServiceAlert, OpListServiceAlerts}
}

// AlertListRoute says how a host answers its alert list route, as the
// services' versions do (see cloud-apis-today.md).
type AlertListRoute string

// The ways a host answers its alert list route.
const (
	// AlertListPaged pages as today's servers do: the alert API's
	// {data, meta: {total, limit, offset}}, the management API's envelope
	// with result {data, meta}. limit is 1 to 1000, 1000 by default.
	AlertListPaged AlertListRoute = ""
	// AlertListUnpaged answers as older versions do, the whole list in one
	// answer without meta: the alert API's {data: [...]}, the management
	// API's envelope with result as a bare array.
	AlertListUnpaged AlertListRoute = "unpaged"
	// AlertListNone has no list route: 404 with Express's "Cannot GET"
	// page. The single GET still answers.
	AlertListNone AlertListRoute = "none"
	// AlertListIgnoresOffset pages, but always from the list's start,
	// whatever offset asks: a page that never ends.
	AlertListIgnoresOffset AlertListRoute = "ignoresOffset"
	// AlertListNotAList answers 200 with a body that is not a list: the
	// alert API's {data: {...one alert...}}, the management API's envelope
	// with result one alert.
	AlertListNotAList AlertListRoute = "notAList"
)

// maxAlertPageLimit is the largest page, and the default one, of both
// hosts.
const maxAlertPageLimit = 1000

// AlertListChange is an alert created or deleted between two page reads:
// it is applied once, just before the fake answers the call number
// BeforeCall (from 1) of its list operation counted since it was set, so
// that BeforeCall 2 changes the list between the first page and the second.
type AlertListChange struct {
	BeforeCall int `json:"beforeCall"`
	// Create, when set, is a new alert: on the management host it goes
	// first in the service's list, on the alert host where its id sorts.
	Create map[string]any `json:"create,omitempty"`
	// Delete, when set, is the id of an alert to remove.
	Delete string `json:"delete,omitempty"`
}

// alertListChange is a pending AlertListChange and the calls seen since it
// was set.
type alertListChange struct {
	AlertListChange
	calls int
}

// SetAlertListRoute sets how the alert API answers GET /api/v2/alerts.
func (s *Server) SetAlertListRoute(route AlertListRoute) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.AlertListRoute = route
}

// SetServiceAlertListRoute sets how the management API answers GET
// .../services/{svc}/observability/alerts.
func (s *Server) SetServiceAlertListRoute(route AlertListRoute) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.ServiceAlertListRoute = route
}

// SetAlertListChange sets a change of the list op (OpListAlerts or
// OpListServiceAlerts) between two of its page reads, replacing any
// pending one.
func (s *Server) SetAlertListChange(op Operation, c AlertListChange) {
	c.Create = cloneObject(c.Create)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listChanges == nil {
		s.listChanges = map[Operation]*alertListChange{}
	}
	s.listChanges[op] = &alertListChange{AlertListChange: c}
}

// SetServiceAlerts sets the alerts the management API serves for a service
// (a copy, in the cloud's order), creating the service if needed.
func (s *Server) SetServiceAlerts(organizationID, serviceID string, alerts []map[string]any) {
	alerts = cloneObjects(alerts)
	s.updateService(organizationID, serviceID, func(svc *Service) Service {
		svc.Alerts = alerts
		return *svc
	})
}

// applyListChange applies the pending change of op when its call has come;
// the caller holds s.mu. org and svc name the service of a management
// list.
func (s *Server) applyListChange(op Operation, org, svc string) {
	c := s.listChanges[op]
	if c == nil {
		return
	}
	c.calls++
	if c.calls < c.BeforeCall {
		return
	}
	delete(s.listChanges, op)
	if op == OpListAlerts {
		if c.Delete != "" {
			delete(s.data.Alerts, c.Delete)
		}
		if id, ok := c.Create["id"].(string); ok {
			if s.data.Alerts == nil {
				s.data.Alerts = map[string]map[string]any{}
			}
			s.data.Alerts[id] = c.Create
		}
		return
	}
	service, ok := s.data.Organizations[org][svc]
	if !ok {
		return
	}
	alerts := slices.DeleteFunc(cloneObjects(service.Alerts), func(a map[string]any) bool { return c.Delete != "" && a["id"] == c.Delete })
	if c.Create != nil {
		alerts = append([]map[string]any{c.Create}, alerts...)
	}
	service.Alerts = alerts
	s.data.Organizations[org][svc] = service
}

// listAlerts serves the alert API's list of every alert, ordered by id (an
// ObjectId's order is its creation's).
func (s *Server) listAlerts(w http.ResponseWriter, r *http.Request) {
	s.serve(OpListAlerts, w, r, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		route := s.data.AlertListRoute
		if route == AlertListNone {
			s.mu.Unlock()
			writeRouteNotFound(w, r)
			return
		}
		s.applyListChange(OpListAlerts, "", "")
		alerts := make([]map[string]any, 0, len(s.data.Alerts))
		for _, id := range slices.Sorted(maps.Keys(s.data.Alerts)) {
			alerts = append(alerts, shapeAlert(s.data.Alerts[id], s.data.AlertShape))
		}
		s.mu.Unlock()
		s.answerAlertList(w, r, OpListAlerts, route, alerts)
	})
}

// listServiceAlerts serves the management API's list of a service's
// alerts, in the order of its data.
func (s *Server) listServiceAlerts(w http.ResponseWriter, r *http.Request) {
	s.serve(OpListServiceAlerts, w, r, func(w http.ResponseWriter, r *http.Request) {
		org, svcID := r.PathValue("org"), r.PathValue("svc")
		s.mu.Lock()
		route := s.data.ServiceAlertListRoute
		if route == AlertListNone {
			s.mu.Unlock()
			writeRouteNotFound(w, r)
			return
		}
		s.applyListChange(OpListServiceAlerts, org, svcID)
		svc, ok := s.data.Organizations[org][svcID]
		alerts := make([]map[string]any, 0, len(svc.Alerts))
		for _, a := range svc.Alerts {
			alerts = append(alerts, shapeAlert(a, s.data.AlertShape))
		}
		s.mu.Unlock()
		if !ok {
			s.writeError(w, OpListServiceAlerts, http.StatusNotFound, "organization or service not found")
			return
		}
		s.answerAlertList(w, r, OpListServiceAlerts, route, alerts)
	})
}

// getServiceAlert serves one alert of a service from the management API,
// in its envelope.
func (s *Server) getServiceAlert(w http.ResponseWriter, r *http.Request) {
	s.serve(OpGetServiceAlert, w, r, func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		svc, ok := s.data.Organizations[r.PathValue("org")][r.PathValue("svc")]
		var alert map[string]any
		for _, a := range svc.Alerts {
			if a["id"] == r.PathValue("id") {
				alert = shapeAlert(a, s.data.AlertShape)
			}
		}
		var body []byte
		var err error
		if alert != nil {
			body, err = json.Marshal(map[string]any{"status": http.StatusOK, "requestId": uuid.NewString(), "result": alert})
		}
		s.mu.Unlock()
		switch {
		case !ok:
			s.writeError(w, OpGetServiceAlert, http.StatusNotFound, "organization or service not found")
		case alert == nil:
			s.writeError(w, OpGetServiceAlert, http.StatusNotFound, "alert not found")
		case err != nil:
			s.writeError(w, OpGetServiceAlert, http.StatusInternalServerError, "fake data cannot be marshaled")
		default:
			writeJSON(w, http.StatusOK, body)
		}
	})
}

// answerAlertList answers a page of alerts as route says, in the style of
// op's host.
func (s *Server) answerAlertList(w http.ResponseWriter, r *http.Request, op Operation, route AlertListRoute, alerts []map[string]any) {
	limit, offset, err := pageOf(r)
	if err != nil {
		s.writeError(w, op, http.StatusBadRequest, "Params validation failed: "+err.Error())
		return
	}
	if route == AlertListIgnoresOffset {
		offset = 0
	}
	page := alerts[min(offset, len(alerts)):min(offset+limit, len(alerts))]
	var answer any
	switch route {
	case AlertListUnpaged:
		answer = alerts
		if op == OpListAlerts {
			answer = map[string]any{"data": alerts}
		}
	case AlertListNotAList:
		var one map[string]any
		if len(alerts) > 0 {
			one = alerts[0]
		}
		answer = one
		if op == OpListAlerts {
			answer = map[string]any{"data": one}
		}
	default:
		answer = map[string]any{"data": page, "meta": map[string]any{"total": len(alerts), "limit": limit, "offset": offset}}
	}
	if op == OpListServiceAlerts {
		answer = map[string]any{"status": http.StatusOK, "requestId": uuid.NewString(), "result": answer}
	}
	body, err := json.Marshal(answer)
	if err != nil {
		s.writeError(w, op, http.StatusInternalServerError, "fake data cannot be marshaled")
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// pageOf reads a list call's limit (1 to 1000, 1000 when absent) and
// offset (0 or more, 0 when absent).
func pageOf(r *http.Request) (limit, offset int, err error) {
	limit, offset = maxAlertPageLimit, 0
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxAlertPageLimit {
			return 0, 0, fmt.Errorf("limit: must be an integer from 1 to %d", maxAlertPageLimit)
		}
	}
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return 0, 0, fmt.Errorf("offset: must be an integer of 0 or more")
		}
	}
	return limit, offset, nil
}

// writeRouteNotFound answers as Express does for a route it does not have.
func writeRouteNotFound(w http.ResponseWriter, r *http.Request) {
	f := RouteNotFoundFault(r.URL.Path)
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(f.Status)
	_, _ = w.Write([]byte(f.Body))
}
