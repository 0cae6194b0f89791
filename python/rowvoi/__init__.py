"""rowvoi"""
