package controller

import (
	"encoding/json"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// DefaultStatusSizeLimit bounds the JSON size of a status, well under etcd's
// 1.5 MiB object limit, leaving room for metadata, spec and managed fields.
const DefaultStatusSizeLimit = 800 << 10

// truncate cuts the pipe and endpoint lists, from the end of their stable
// order, until the status fits in limit bytes, and says so in the
// StatusTruncated condition. The summary keeps the real counts. The same
// input always gives the same output, so a large, unchanged service still
// yields a byte-identical status.
func truncate(status *swv1.ServiceWatchStatus, limit int, gen int64) {
	if limit > 0 && jsonSize(status) > limit {
		pipeSizes, endpointSizes := itemSizes(status.Pipes), itemSizes(status.ReversePrivateEndpoints)
		lists := *status
		lists.Pipes, lists.ReversePrivateEndpoints = nil, nil
		// The two list fields with their names and brackets.
		budget := limit - jsonSize(&lists) - len(`,"pipes":[],"reversePrivateEndpoints":[]`)
		// Endpoints are few and pipes reference them, so pipes are cut first.
		keepEndpoints := prefixFitting(endpointSizes, budget)
		keepPipes := prefixFitting(pipeSizes, budget-sum(endpointSizes[:keepEndpoints]))
		status.Pipes = status.Pipes[:keepPipes]
		status.ReversePrivateEndpoints = status.ReversePrivateEndpoints[:keepEndpoints]
	}
	setTruncatedCondition(status, limit, gen)
}

// setTruncatedCondition derives StatusTruncated from the lists and the
// summary's counts, so a part that failed keeps telling the truth about the
// data it kept.
func setTruncatedCondition(status *swv1.ServiceWatchStatus, limit int, gen int64) {
	pipes, endpoints := int32(len(status.Pipes)), int32(len(status.ReversePrivateEndpoints))
	if pipes >= status.Summary.Pipes && endpoints >= status.Summary.ReversePrivateEndpoints {
		meta.RemoveStatusCondition(&status.Conditions, swv1.ConditionStatusTruncated)
		return
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: swv1.ConditionStatusTruncated, Status: metav1.ConditionTrue, Reason: swv1.ReasonTooLarge, ObservedGeneration: gen,
		Message: fmt.Sprintf("status lists %d of %d pipes and %d of %d reverse private endpoints (%d items left out) to stay under %d KiB; summary counts are complete",
			pipes, status.Summary.Pipes, endpoints, status.Summary.ReversePrivateEndpoints,
			status.Summary.Pipes-pipes+status.Summary.ReversePrivateEndpoints-endpoints, limit>>10),
	})
}

// itemSizes returns the JSON size of each item, plus one for the comma that
// separates it from the next.
func itemSizes[T any](items []T) []int {
	sizes := make([]int, len(items))
	for i := range items {
		raw, err := json.Marshal(items[i])
		if err != nil {
			sizes[i] = math.MaxInt32 // cannot be written: never kept
			continue
		}
		sizes[i] = len(raw) + 1
	}
	return sizes
}

// prefixFitting returns how many leading items fit in budget bytes.
func prefixFitting(sizes []int, budget int) int {
	used := 0
	for i, size := range sizes {
		if used+size > budget {
			return i
		}
		used += size
	}
	return len(sizes)
}

func sum(values []int) int {
	total := 0
	for _, v := range values {
		total += v
	}
	return total
}

func jsonSize(status *swv1.ServiceWatchStatus) int {
	raw, err := json.Marshal(status)
	if err != nil {
		return 0
	}
	return len(raw)
}
