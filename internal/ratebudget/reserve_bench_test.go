package ratebudget

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// BenchmarkAdmitReserve measures one admission and one allowance of a
// budget, side by side: under the store's reserve (every key before a
// cloud account's reserve existed) and under an account's own reserve
// (SetReserve), among 1,000 budgets.
func BenchmarkAdmitReserve(b *testing.B) {
	for _, own := range []bool{false, true} {
		name := "store-reserve"
		if own {
			name = "account-reserve"
		}
		b.Run(name, func(b *testing.B) {
			clock := clocktesting.NewFakeClock(epoch)
			s := NewReservingStore(map[string]RateLimit{apiManagement: defaultManagementRate()}, 0.2)
			s.now = clock.Now
			const host = "https://api.example.com"
			keys := make([]CredentialID, 1000)
			ids := make([]string, len(keys))
			for i := range keys {
				keys[i] = basicCreds("k", string(rune('a'+i%26))+time.Duration(i).String())
				ids[i] = BudgetID(apiManagement, host, keys[i])
				if own {
					s.SetReserve(apiManagement, host, keys[i], 0.5)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := i % len(keys)
				s.Admit(apiManagement, host, keys[k], 1)
				_ = s.Allowance(apiManagement, ids[k])
				clock.Step(time.Millisecond)
			}
		})
	}
}
