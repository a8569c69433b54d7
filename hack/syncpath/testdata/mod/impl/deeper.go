package impl

func deeper() int { return 2 }
