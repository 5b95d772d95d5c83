"""What a policy goes through after issuance: cancellation (iptal), and the insurer's production
list reconciled with the platform's."""
