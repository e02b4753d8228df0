print("lookout")
