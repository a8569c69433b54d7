package impl

type fake struct{}

func (fake) Get() int { return 0 }
