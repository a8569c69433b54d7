package storagemigration

// SetAfterObject has m call hook after each object it handles, with the
// CRD's name and how many of its objects were handled, so that a test can
// interrupt a run at a chosen point.
func (m *Migrator) SetAfterObject(hook func(crd string, done int)) { m.afterObject = hook }
